"""The Prometheus metrics of runs, model requests and tool calls, in a registry of their own.

`install_metrics()` has spans count into them (`serve` and `gateway` call it; `/metrics` shows them).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from toolbridge.telemetry._meter import Meter, use_meter

__all__ = ["METRICS", "PrometheusMeter", "install_metrics"]

METRICS = CollectorRegistry(auto_describe=True)
"""Ours alone (not prometheus_client's global one), so /metrics shows toolbridge and nothing else."""

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

RUNS = Counter(
    "toolbridge_runs",
    "Agent runs finished, by agent and stop reason.",
    ["agent", "stop_reason"],
    registry=METRICS,
)
STEPS = Counter(
    "toolbridge_steps", "Agent steps (one model request each), by agent.", ["agent"], registry=METRICS
)
ACTIVE_RUNS = Gauge("toolbridge_active_runs", "Agent runs in progress.", registry=METRICS)
ACTIVE_STREAMS = Gauge(
    "toolbridge_active_event_streams", "Open event streams (web page and OpenAI streaming).", registry=METRICS
)
TOOL_CALLS = Counter(
    "toolbridge_tool_calls",
    "Tool calls finished, by tool, server and outcome (ok, or the error kind).",
    ["tool", "server", "outcome"],
    registry=METRICS,
)
TOOL_SECONDS = Histogram(
    "toolbridge_tool_call_duration_seconds",
    "Seconds tool calls took.",
    ["tool", "server"],
    buckets=_SECONDS,
    registry=METRICS,
)
CACHE_HITS = Counter(
    "toolbridge_tool_cache_hits",
    "Tool calls answered from the result cache.",
    ["tool", "server"],
    registry=METRICS,
)
MODEL_SECONDS = Histogram(
    "toolbridge_model_request_duration_seconds",
    "Seconds model requests took (until the reply was read), by model and outcome.",
    ["model", "outcome"],
    buckets=_SECONDS,
    registry=METRICS,
)
MODEL_TOKENS = Counter(
    "toolbridge_model_tokens",
    "Tokens models reported, by model and type (input, output).",
    ["model", "type"],
    registry=METRICS,
)


class PrometheusMeter(Meter):
    def run_started(self) -> None:
        ACTIVE_RUNS.inc()

    def run_ended(self, agent: str, stop_reason: str) -> None:
        ACTIVE_RUNS.dec()
        RUNS.labels(agent, stop_reason).inc()

    def step(self, agent: str) -> None:
        STEPS.labels(agent).inc()

    def model_request(self, model: str, outcome: str, seconds: float) -> None:
        MODEL_SECONDS.labels(model, outcome).observe(seconds)

    def model_tokens(self, model: str, input_tokens: int, output_tokens: int) -> None:
        MODEL_TOKENS.labels(model, "input").inc(input_tokens)
        MODEL_TOKENS.labels(model, "output").inc(output_tokens)

    def tool_call(self, tool: str, server: str, outcome: str, *, seconds: float | None, cached: bool) -> None:
        TOOL_CALLS.labels(tool, server, outcome).inc()
        if cached:
            CACHE_HITS.labels(tool, server).inc()
        if seconds is not None:
            TOOL_SECONDS.labels(tool, server).observe(seconds)

    def event_streams(self, change: int) -> None:
        ACTIVE_STREAMS.inc(change)


def install_metrics() -> None:
    """Count runs, model requests, tool calls and event streams into `METRICS` from now on."""
    use_meter(PrometheusMeter())
