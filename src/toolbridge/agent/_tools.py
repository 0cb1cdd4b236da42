"""Running the calls of one reply: all at once, each with its timeout, approval first where needed.

Every outcome is a result the model can read: an unknown tool, a call the user declined, a tool error,
a timeout, a server that is down. Results longer than the agent's limit are cut, with a note saying
how much. Records land in a dict shared with the loop, so a cancelled run still knows what finished.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterable

import anyio

from toolbridge.agent._reply import Emit
from toolbridge.agent._unwrap import unwrapped
from toolbridge.agent.approval import ApprovalRequest, Approver
from toolbridge.agent.definition import AgentDefinition
from toolbridge.agent.events import (
    ApprovalDecidedEvent,
    ApprovalRequestedEvent,
    ToolCallFinishedEvent,
    ToolCallProgressEvent,
    ToolCallStartedEvent,
    preview,
)
from toolbridge.agent.result import ToolCallRecord
from toolbridge.mcp import ProgressHandler, ToolProgress
from toolbridge.telemetry import trace_tool_call
from toolbridge.tools.registry import QUALIFIER, ToolRegistry
from toolbridge.types import ToolCall, ToolResult, ToolSpec

__all__ = ["ToolRunner"]


class ToolRunner:
    """Runs calls against the tools one agent offers (and only those)."""

    def __init__(
        self,
        registry: ToolRegistry,
        tools: Iterable[ToolSpec],
        definition: AgentDefinition,
        *,
        approve: Approver | None,
        emit: Emit | None,
        cache_scope: str | None = None,
    ) -> None:
        self._registry = registry
        self._cache_scope = cache_scope
        self._tools = {tool.name: tool for tool in tools}
        self._definition = definition
        self._approve = approve
        self._emit = emit
        self._approval_lock = anyio.Lock()  # one question to the user at a time

    async def run_all(
        self,
        step: int,
        calls: list[ToolCall],
        ready_results: dict[str, ToolResult],
        records: dict[str, ToolCallRecord],
    ) -> None:
        """Run `calls` concurrently; `ready_results` are answers already known (unreadable arguments).

        An approver's exception ends the run and comes out as itself."""
        with unwrapped():
            async with anyio.create_task_group() as group:
                for call in calls:
                    group.start_soon(self._run_one, step, call, ready_results.get(call.id), records)

    async def _run_one(
        self, step: int, call: ToolCall, ready: ToolResult | None, records: dict[str, ToolCallRecord]
    ) -> None:
        tool = self.resolve(call.name)
        with trace_tool_call(call.name, call.id, server=tool.source if tool else None) as traced:
            record = await self._call(step, call, tool, ready)
            result = record.result
            traced.finish(
                server=result.server,
                error_kind=result.error_kind,
                duration=result.duration,
                cached=result.cached,
                ran=record.ran,
            )
        records[call.id] = record
        await self._send(
            ToolCallFinishedEvent(
                step=step,
                call_id=call.id,
                name=call.name,
                is_error=result.is_error,
                error_kind=result.error_kind,
                result_preview=preview(result.text),
                duration=result.duration,
                server=result.server,
                truncated_chars=record.truncated_chars,
                cached=result.cached,
            )
        )

    async def _call(
        self, step: int, call: ToolCall, tool: ToolSpec | None, ready: ToolResult | None
    ) -> ToolCallRecord:
        await self._send(ToolCallStartedEvent(step=step, call=call, server=tool.source if tool else None))
        approved: bool | None = None
        if ready is not None:
            result, ran = ready, False
        elif tool is None:
            message = self._unknown_tool_message(call.name)
            result, ran = ToolResult.error(call.id, message, kind="unknown_tool"), False
        else:
            reason = self._definition.approval.approval_reason(tool)
            if reason is not None:
                approved = await self._ask(step, call, tool, reason)
            if approved is False:
                result, ran = _declined(call, tool, reason or "", asked=self._approve is not None), False
            else:
                routed = call.model_copy(update={"name": tool.name, "source": None})
                timeout = self._definition.call_timeout
                result = await self._registry.call(
                    routed,
                    timeout=timeout,
                    cache_scope=self._cache_scope,
                    on_progress=self._progress_reporter(step, call, tool),
                )
                ran = True
        result, cut = result.truncated(self._definition.max_result_chars)
        return ToolCallRecord(
            step=step, call=call, result=result, approved=approved, ran=ran, truncated_chars=cut
        )

    def _progress_reporter(self, step: int, call: ToolCall, tool: ToolSpec) -> ProgressHandler:
        async def report(progress: ToolProgress) -> None:
            event = ToolCallProgressEvent(
                step=step,
                call_id=call.id,
                name=call.name,
                server=tool.source,
                progress=progress.progress,
                total=progress.total,
                message=progress.message,
                percent=progress.percent,
            )
            # Told from the server session's task: a report racing the run's end finds the stream closed.
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._send(event)

        return report

    def resolve(self, name: str) -> ToolSpec | None:
        """The offered tool a model means by `name`, also when it (un)qualified the name: `excel__read`."""
        if name in self._tools:
            return self._tools[name]
        if QUALIFIER in name:
            source, _, bare = name.partition(QUALIFIER)
            for tool in self._tools.values():
                if tool.source == source and bare in (tool.name, tool.name.rpartition(QUALIFIER)[2]):
                    return tool
        qualified = [tool for tool in self._tools.values() if tool.name.endswith(QUALIFIER + name)]
        return qualified[0] if len(qualified) == 1 else None

    async def _ask(self, step: int, call: ToolCall, tool: ToolSpec, reason: str) -> bool:
        if self._approve is None:
            return False
        async with self._approval_lock:
            await self._send(ApprovalRequestedEvent(step=step, call=call, reason=reason))
            approved = bool(await self._approve(ApprovalRequest(call=call, tool=tool, reason=reason)))
            await self._send(ApprovalDecidedEvent(step=step, call_id=call.id, approved=approved))
        return approved

    def _unknown_tool_message(self, name: str) -> str:
        names = sorted(self._tools)
        close = difflib.get_close_matches(name, names, n=5, cutoff=0.5)
        message = f"Unknown tool {name!r}, so nothing ran."
        if close:
            message += f" Did you mean: {', '.join(close)}?"
        else:
            message += f" Available tools: {', '.join(names[:30]) or 'none'}."
        return message + " Call one of the available tools with its exact name."

    async def _send(
        self,
        event: ToolCallStartedEvent
        | ToolCallProgressEvent
        | ToolCallFinishedEvent
        | ApprovalRequestedEvent
        | ApprovalDecidedEvent,
    ) -> None:
        if self._emit is not None:
            await self._emit(event)


def _declined(call: ToolCall, tool: ToolSpec, reason: str, *, asked: bool) -> ToolResult:
    if asked:
        message = (
            f"The user declined this call to {tool.name!r}, so it did not run. Do not call it again; "
            "continue without it, or ask the user what they want instead."
        )
    else:
        message = (
            f"This call to {tool.name!r} needs the user's approval ({reason}), and no one could be asked, "
            "so it did not run. Tell the user what you wanted to do, so they can run it with approval."
        )
    return ToolResult.error(call.id, message, kind="denied", server=tool.source)
