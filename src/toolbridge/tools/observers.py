"""Observers of the call pipeline that every surface shares: spans and metrics (`TracedCalls`).

The call log is the store's (`toolbridge.store.CallLog`). Spans are no-ops until a tracer provider is
installed, and the numbers go nowhere until `toolbridge.telemetry.metrics.install_metrics()`.
"""

from __future__ import annotations

from toolbridge.telemetry import ToolCallTrace, start_tool_span
from toolbridge.tools.pipeline import CallRecord

__all__ = ["TracedCalls"]


class TracedCalls:
    """An `execute_tool {tool}` span around every call, and the call's numbers for the metrics."""

    async def call_ended(self, record: CallRecord) -> None:
        trace: ToolCallTrace = record.kept.pop(self)
        result = record.result
        trace.end(
            server=result.server,
            error_kind=result.error_kind if result.is_error else None,
            duration=result.duration,
            cached=result.cached,
            ran=record.ran,
        )

    def call_started(self, record: CallRecord) -> None:
        record.kept[self] = start_tool_span(record.call.name, record.call.id, caller=record.context.caller)
