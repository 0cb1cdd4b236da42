"""One path for every tool call, whoever makes it: an agent's model, a gateway client, an HTTP client,
`toolbridge call`, a program using `Toolbox`.

    resolve the name -> filter (who may use it) -> approval -> validate the arguments -> cache -> dispatch

and the observers (the call log, spans, metrics) around all of it. Each front door builds a `CallContext`
saying who calls and how it answers approval, and turns the `CallOutcome` into its own reply. A step
that refuses the call raises a `ToolError` (`refusals`), which becomes the error result every surface
shows in the same words; nothing a model can correct raises out of `ToolPipeline.call`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

import anyio

from toolbridge._deferred import CallDeferred
from toolbridge.config.agents import ApprovalPolicy
from toolbridge.errors import ToolError
from toolbridge.mcp import CallOutcome, ProgressHandler
from toolbridge.tools import refusals
from toolbridge.tools.approval import ApprovalRequest, Approver
from toolbridge.tools.cache import ResultCache
from toolbridge.tools.function import FunctionTool
from toolbridge.tools.registry import RegisteredTool, ToolFilter, ToolRegistry
from toolbridge.tools.sources import FunctionSource
from toolbridge.tools.validation import validate_arguments
from toolbridge.types import Caller, ToolCall, ToolResult, ToolSpec

__all__ = [
    "CallContext",
    "CallDeferred",
    "CallObserver",
    "CallRecord",
    "Caller",
    "ToolPipeline",
]


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who makes a call, on whose behalf, and how the steps of the pipeline answer for them."""

    caller: Caller = "library"
    user_id: int | None = None
    chat_id: int | None = None
    run_id: str | None = None
    cache_scope: str | None = None
    """The conversation the call belongs to: the result cache keeps each one's entries apart."""
    timeout: float | None = None
    """Seconds the call may take (None: the server's own timeout)."""
    on_progress: ProgressHandler | None = None
    allows: ToolFilter | None = None
    """Which tools this caller may use (an agent's tool rules, a gateway token's reach); None: all."""
    approval: ApprovalPolicy | None = None
    """Which calls need approval; None: none do."""
    approve: Approver | None = None
    """Asks for approval; None: nobody can be asked here, so calls that need it are refused."""

    def but(self, **changes: Any) -> CallContext:
        """A copy with `changes` (the same caller, making a call with another timeout, say)."""
        return replace(self, **changes)


LIBRARY = CallContext()


@dataclass(slots=True)
class CallRecord:
    """One call as the observers see it; the pipeline fills it in as the call goes."""

    call: ToolCall
    """The call as the caller made it (the name it used)."""
    context: CallContext
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    tool: ToolSpec | None = None
    """The tool it resolved to (None: no tool matched)."""
    ran: bool = False
    """Whether it reached its tool (or the result cache)."""
    outcome: CallOutcome | None = None
    """Set when it ends, however it ends (cancelled: an error result saying so)."""
    deferred: bool = False
    """Its server asked the caller's client for input, who answers in a later request (a round of a call
    on 2026-07-28): it has no outcome, and that later request is the call counted and logged."""
    kept: dict[object, Any] = field(default_factory=dict)
    """What observers keep between a call's start and end (a span), each under a key of its own."""

    @property
    def result(self) -> ToolResult:
        assert self.outcome is not None, "read once the call has ended"
        return self.outcome.result


class CallObserver(Protocol):
    """Told about every call of a pipeline once: the call log, spans, metrics. `call_started` runs in the
    calling task once approval is settled (a span opened there is the current one while the call runs;
    the time a person takes to answer is not the call's), `call_ended` in the same task when the call
    ended, also when cancelled (then shielded). A call whose approval is deferred to a later request
    (`CallDeferred`) is not told about; one whose server asks its caller's client first is told about
    with `deferred` set, and nothing to count or log. Observers must not raise."""

    def call_started(self, record: CallRecord) -> None: ...

    async def call_ended(self, record: CallRecord) -> None: ...


class ToolPipeline:
    """Runs calls on the tools of a registry, for any caller; `observers` are told about each one."""

    def __init__(self, registry: ToolRegistry, observers: Sequence[CallObserver] = ()) -> None:
        self.registry = registry
        self.observers = observers
        """Shared with whoever installs them (a `Toolbox`'s list): added later, they still hear every call."""
        self._own: dict[str, RegisteredTool] = {}

    def with_own_tools(self, tools: Sequence[FunctionTool]) -> ToolPipeline:
        """This pipeline, with tools of the caller's own besides the registry's (an agent run's
        `search_tools`): they take their names first, and the caller's tool rules (`allows`) are not
        theirs to pass; everything else (approval, validation, observers) is as for any call."""
        pipeline = ToolPipeline(self.registry, self.observers)
        source = FunctionSource(tools)
        pipeline._own = {tool.spec.name: RegisteredTool(tool.spec, tool.spec.name, source) for tool in tools}
        return pipeline

    async def _resolve(self, call: ToolCall, context: CallContext) -> RegisteredTool:
        own = self._own.get(call.name) if self._own and not call.source else None
        return own or await self.registry.resolve(call.name, call.source, allows=context.allows)

    async def find(self, name: str, context: CallContext = LIBRARY) -> ToolSpec | None:
        """The tool a call of `name` would run, if the caller may use it (for a caller that says which
        tool it is about to call before calling it)."""
        try:
            return (await self._resolve(ToolCall(name=name), context)).spec
        except ToolError:
            return None

    async def call(self, call: ToolCall, context: CallContext = LIBRARY) -> CallOutcome:
        """Run `call` for `context`'s caller. Never raises for what a model can correct (that is an error
        result); an approver's exception other than a `ToolError` comes out as itself."""
        record = CallRecord(call, context) if self.observers else None
        try:
            admitted = await self._admit(call, context, record)
        except CallDeferred:
            raise  # asked again in a later request: the observers hear of it then
        except BaseException as error:
            if record is not None:  # cancelled (or the approver failed) while approval was asked
                self._tell_started(record)
                await self._tell_broken_off(record, error)
            raise
        if record is None:
            return admitted if isinstance(admitted, CallOutcome) else await self._dispatch(*admitted, context)
        self._tell_started(record)
        if isinstance(admitted, CallOutcome):
            record.outcome = admitted
        else:
            record.ran = True
            try:
                record.outcome = await self._dispatch(*admitted, context)
            except CallDeferred:
                record.deferred = True
                with anyio.CancelScope(shield=True):
                    await self._tell_ended(record)
                raise
            except BaseException as error:
                await self._tell_broken_off(record, error)
                raise
        await self._tell_ended(record)
        return record.outcome

    async def answered(self, call: ToolCall, result: ToolResult, context: CallContext) -> None:
        """Tell the observers about a call answered without running (its arguments could not be read)."""
        if self.observers:
            record = CallRecord(call, context, outcome=CallOutcome(result))
            self._tell_started(record)
            await self._tell_ended(record)

    def _tell_started(self, record: CallRecord) -> None:
        for observer in self.observers:
            observer.call_started(record)

    async def _tell_ended(self, record: CallRecord) -> None:
        for observer in self.observers:
            await observer.call_ended(record)

    async def _tell_broken_off(self, record: CallRecord, error: BaseException) -> None:
        record.outcome = CallOutcome(_broken_off(record, error))
        with anyio.CancelScope(shield=True):
            await self._tell_ended(record)

    async def _admit(
        self, call: ToolCall, context: CallContext, record: CallRecord | None
    ) -> CallOutcome | tuple[RegisteredTool, ToolCall, list[str]]:
        """Resolve, filter, approve and validate `call`: the refusal's outcome, or what to dispatch (the
        tool, the call as its source knows it, notes on the arguments)."""
        started = time.perf_counter()
        tool: RegisteredTool | None = None
        try:
            tool = await self._resolve(call, context)
            if record is not None:
                record.tool = tool.spec
            if context.approval is not None:
                await _approve(call, tool.spec, context)
            arguments, notes = validate_arguments(tool.spec, call.arguments)
        except ToolError as refused:
            server = refused.server or (tool.spec.source if tool is not None else None)
            duration = time.perf_counter() - started
            return CallOutcome(
                ToolResult.error(call.id, str(refused), kind=refused.kind, server=server, duration=duration)
            )
        changes: dict[str, Any] = {}  # usually none: then the call goes on as it is
        if tool.original != call.name:
            changes["name"] = tool.original
        if arguments is not call.arguments:
            changes["arguments"] = arguments
        return tool, call.model_copy(update=changes) if changes else call, notes

    async def _dispatch(
        self, tool: RegisteredTool, routed: ToolCall, notes: list[str], context: CallContext
    ) -> CallOutcome:
        cache = self.registry.cache
        if cache is None or not cache.in_play(tool.spec, tool.original):
            # Never kept, and nothing kept to drop: no cache key to work out.
            outcome = await tool.source.call(routed, context)
        else:
            outcome = await _through_cache(cache, tool, routed, context)
        if notes:
            noted = outcome.result.model_copy(update={"notes": [*notes, *outcome.result.notes]})
            outcome = CallOutcome(noted, outcome.raw)
        return outcome


async def _approve(call: ToolCall, tool: ToolSpec, context: CallContext) -> None:
    """Returns when the call may run; raises the refusal when it may not."""
    assert context.approval is not None
    reason = context.approval.approval_reason(tool)
    if reason is None:
        return
    if context.approve is None:
        raise refusals.unapproved(tool, reason)
    if not await context.approve(ApprovalRequest(call=call, tool=tool, reason=reason)):
        raise refusals.declined(tool)


async def _through_cache(
    cache: ResultCache, tool: RegisteredTool, call: ToolCall, context: CallContext
) -> CallOutcome:
    spec, original, server = tool.spec, tool.original, tool.spec.source
    if cache.may_write(spec, original):
        # Before: no read may be served the data this call replaces. After: nor what a read that
        # overlapped it saw. Also when it fails: it may have written part of its change.
        cache.forget_server(server)
        try:
            return await tool.source.call(call, context)
        finally:
            cache.forget_server(server)
    if cache.ttl(spec, original) <= 0:
        return await tool.source.call(call, context)
    started = time.perf_counter()
    hit = cache.get(spec, original, call.arguments, chat=context.cache_scope)
    if hit is not None:
        update = {"call_id": call.id, "cached": True, "duration": time.perf_counter() - started}
        return CallOutcome(hit.model_copy(update=update))
    generation = cache.generation(server)
    outcome = await tool.source.call(call, context)
    cache.put(spec, original, call.arguments, outcome.result, chat=context.cache_scope, generation=generation)
    return outcome


def _broken_off(record: CallRecord, error: BaseException) -> ToolResult:
    """The result of a call that ended by an exception: cancelled (the caller went away), or failed."""
    call = record.call
    elapsed = (datetime.now(UTC) - record.started_at).total_seconds()
    server = record.tool.source if record.tool is not None else None
    if isinstance(error, anyio.get_cancelled_exc_class()):
        return ToolResult.error(
            call.id, "The call was cancelled.", kind="cancelled", server=server, duration=elapsed
        )
    message = f"The call failed: {type(error).__name__}: {error}"
    return ToolResult.error(call.id, message, kind="server_error", server=server, duration=elapsed)
