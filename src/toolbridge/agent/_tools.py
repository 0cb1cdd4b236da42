"""Running the calls of one reply, all at once, through the call pipeline (`toolbridge.tools.pipeline`).

The pipeline resolves, filters (the agent's tool rules), asks for approval, validates, caches, runs and
tells its observers (call log, spans, metrics). This adapter says who calls (`CallContext`), answers
approval by asking the agent's approver one call at a time, turns progress and approval into the run's
events, and cuts results longer than the agent's limit. Records land in a dict shared with the loop, so a
cancelled run still knows what finished.
"""

from __future__ import annotations

import contextlib

import anyio

from toolbridge._exception_groups import unwrapped
from toolbridge.agent._reply import Emit
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
from toolbridge.errors import ToolError
from toolbridge.mcp import ProgressHandler, ToolProgress
from toolbridge.tools import CallContext, ToolPipeline
from toolbridge.types import ToolCall, ToolErrorKind, ToolResult

__all__ = ["ToolRunner"]

_NOT_RUN: frozenset[ToolErrorKind | None] = frozenset({"unknown_tool", "not_allowed", "denied"})
"""The kinds of the pipeline's refusals that stop a call before it reaches its tool."""


class ToolRunner:
    """Runs calls against the tools one agent offers (and only those), for `context`'s caller."""

    def __init__(
        self,
        pipeline: ToolPipeline,
        definition: AgentDefinition,
        context: CallContext,
        *,
        approve: Approver | None,
        emit: Emit | None,
    ) -> None:
        self._pipeline = pipeline
        self._context = context.but(
            allows=definition.why_not_offered,
            approval=definition.approval,
            timeout=definition.call_timeout,
            approve=None,
        )
        self._max_result_chars = definition.max_result_chars
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

        An approver's exception other than a `ToolError` ends the run and comes out as itself."""
        with unwrapped():
            async with anyio.create_task_group() as group:
                for call in calls:
                    group.start_soon(self._run_one, step, call, ready_results.get(call.id), records)

    async def run_one(self, step: int, call: ToolCall) -> ToolCallRecord:
        """Run one call made on the model's behalf by a tool of the run's own (code mode's `run_code`)."""
        records: dict[str, ToolCallRecord] = {}
        await self._run_one(step, call, None, records)
        return records[call.id]

    async def _run_one(
        self, step: int, call: ToolCall, ready: ToolResult | None, records: dict[str, ToolCallRecord]
    ) -> None:
        tool = await self._pipeline.find(call.name, self._context)
        server = tool.source if tool is not None else None
        await self._send(ToolCallStartedEvent(step=step, call=call, server=server))
        approvals: dict[str, bool] = {}
        if ready is not None:
            # Unreadable arguments: answered without running, and still logged against their tool.
            if ready.server is None and server is not None:
                ready = ready.model_copy(update={"server": server})
            await self._pipeline.answered(call, ready, self._context)
            result, ran = ready, False
        else:
            context = self._context.but(
                on_progress=self._progress_reporter(step, call, server),
                approve=self._asker(step, approvals) if self._approve is not None else None,
            )
            result = (await self._pipeline.call(call, context)).result
            ran = not (result.is_error and result.error_kind in _NOT_RUN)
        # Refused for want of approval without anyone saying no (nobody to ask): not approved either.
        approved = approvals.get(call.id, False if result.error_kind == "denied" else None)
        result, cut = result.truncated(self._max_result_chars)
        record = ToolCallRecord(
            step=step, call=call, result=result, approved=approved, ran=ran, truncated_chars=cut
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
                truncated_chars=cut,
                cached=result.cached,
            )
        )

    def _asker(self, step: int, approvals: dict[str, bool]) -> Approver:
        """The pipeline's approval hook: the run's events around the agent's approver, one at a time."""
        approve = self._approve
        assert approve is not None

        async def ask(request: ApprovalRequest) -> bool:
            call = request.call
            async with self._approval_lock:
                await self._send(ApprovalRequestedEvent(step=step, call=call, reason=request.reason))
                try:
                    approved = approvals[call.id] = bool(await approve(request))
                except ToolError:  # the approver refused it (nobody could be asked, say)
                    await self._send(ApprovalDecidedEvent(step=step, call_id=call.id, approved=False))
                    raise
                await self._send(ApprovalDecidedEvent(step=step, call_id=call.id, approved=approved))
            return approved

        return ask

    def _progress_reporter(self, step: int, call: ToolCall, server: str | None) -> ProgressHandler:
        async def report(progress: ToolProgress) -> None:
            event = ToolCallProgressEvent.of(step, call, server, progress)
            # Told from the server session's task: a report racing the run's end finds the stream closed.
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._send(event)

        return report

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
