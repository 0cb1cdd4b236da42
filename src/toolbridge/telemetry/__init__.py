"""Traces, metrics and log context: what the agent reports about itself, free when nobody listens.

- `trace_run`, `trace_model_request`, `start_tool_span`: OpenTelemetry spans following the GenAI semantic
  conventions (`invoke_agent`, `chat`, `execute_tool`), and the numbers of the same events for metrics.
  The spans go nowhere until `configure_tracing()` (or the host program) installs a tracer provider.
- `toolbridge.telemetry.metrics`: the Prometheus registry `toolbridge serve` exposes on `/metrics`, and
  `install_metrics()`, without which nothing is counted (nor the metrics library imported).
- `log_context`, `JsonLogFormatter`: the run, chat and user ids JSON log lines carry, and the lines.

It imports nothing of toolbridge, so every layer may use it.
"""

from typing import TYPE_CHECKING, Any

from toolbridge.telemetry._context import bind_log_context, log_context, set_log_context
from toolbridge.telemetry._logs import logging_config
from toolbridge.telemetry._otlp import TracingUnavailable, configure_tracing
from toolbridge.telemetry._spans import (
    RunTrace,
    ToolCallTrace,
    active_event_stream,
    start_tool_span,
    trace_model_request,
    trace_run,
)

if TYPE_CHECKING:
    from toolbridge.telemetry._json_logs import JsonLogFormatter

__all__ = [
    "JsonLogFormatter",
    "RunTrace",
    "ToolCallTrace",
    "TracingUnavailable",
    "active_event_stream",
    "bind_log_context",
    "configure_tracing",
    "log_context",
    "logging_config",
    "set_log_context",
    "start_tool_span",
    "trace_model_request",
    "trace_run",
]


def __getattr__(name: str) -> Any:
    # python-json-logger comes with the `serve` extra: imported when JSON log lines are asked for.
    if name == "JsonLogFormatter":
        from toolbridge.telemetry._json_logs import JsonLogFormatter

        return JsonLogFormatter
    raise AttributeError(f"module 'toolbridge.telemetry' has no attribute {name!r}")
