"""Observers of the call pipeline that every surface shares: spans and metrics (`TracedCalls`).

The call log is the store's (`toolbridge.store.CallLog`). Spans are no-ops until a tracer provider is
installed, and the numbers go nowhere until `toolbridge.telemetry.metrics.install_metrics()`.
"""

from __future__ import annotations

from toolbridge.telemetry import ToolCallTrace, start_tool_span
from toolbridge.tools.pipeline import CallRecord

__all__ = ["UNKNOWN_TOOL", "TracedCalls"]

UNKNOWN_TOOL = "(unknown)"
"""The metrics' `tool` label of calls that named no tool there is."""


class TracedCalls:
    """An `execute_tool {tool}` span around every call, and the call's numbers for the metrics."""

    async def call_ended(self, record: CallRecord) -> None:
        trace: ToolCallTrace = record.kept.pop(self)
        if record.deferred:
            trace.end_deferred()
            return
        result = record.result
        trace.end(
            server=result.server,
            error_kind=result.error_kind if result.is_error else None,
            duration=result.duration,
            cached=result.cached,
            ran=record.ran,
            # Counted under the tool it resolved to: names a client makes up must not each add a series.
            counted_as=_counted_as(record),
        )

    def call_started(self, record: CallRecord) -> None:
        record.kept[self] = start_tool_span(record.call.name, record.call.id, caller=record.context.caller)


def _counted_as(record: CallRecord) -> str:
    """The metrics' name of a call: the tool it resolved to; the name it used for a tool that exists but
    was refused before it resolved (not allowed here); `(unknown)` for a name no tool has."""
    if record.tool is not None:
        return record.tool.name
    return UNKNOWN_TOOL if record.result.error_kind == "unknown_tool" else record.call.name
