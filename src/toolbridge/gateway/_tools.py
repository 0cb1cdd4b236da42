"""The gateway's tools: the registry's tools as its clients see them, and calls routed through it.

Calls go through `ToolRegistry.call`, so argument validation, timeouts, the result cache and the call
log apply to a gateway call as to an agent's. The registry is the toolbox's, or the client session's
own where servers are configured `"shared": false` (see `_sessions`); a client holding a named HTTP
token sees and calls only the tools that token reaches (`_reach`). The approval policy is applied
first (`_approval`), and while a call runs its upstream server's progress, log messages and requests
go to the client that made it (`_calls`; on 2026-07-28 a call whose client can be asked something runs
in the parking lot between the client's rounds, `_parking`). A result over `max_result_chars` reaches
the client cut, with a note, as an agent's model sees one (`ToolResult.truncated`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

import anyio
import mcp_types as mcp
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolbridge.config.gateway import DEFAULT_GATEWAY_MAX_RESULT_CHARS
from toolbridge.gateway._approval import ApprovalGate, Refused
from toolbridge.gateway._calls import ClientCalls
from toolbridge.gateway._convert import call_result_to_mcp, sent_size, tool_to_mcp
from toolbridge.gateway._parking import Answer, ParkedCall
from toolbridge.gateway._reach import CallerReach
from toolbridge.gateway._sessions import DownstreamSessions
from toolbridge.mcp import ToolProgress
from toolbridge.mcp.raw_results import raw_tool_results
from toolbridge.tools import Toolbox, ToolRegistry
from toolbridge.types import NATIVE_SOURCE, ToolCall, ToolErrorKind, ToolResult, ToolSpec

__all__ = ["CallRecorder", "GatewayTools", "ToolOffer"]

ToolOffer = Callable[[ToolSpec], bool]
"""Whether the gateway offers a tool (an agent's servers and tool filter, `--no-native`)."""

CallRecorder = Callable[[ToolCall, ToolResult, datetime], None]
"""Told every call the gateway ran, with its result and when it started (the call log)."""


class GatewayTools:
    def __init__(
        self,
        toolbox: Toolbox,
        sessions: DownstreamSessions,
        *,
        offers: ToolOffer,
        record: CallRecorder | None = None,
        timeout: float | None = None,
        reach: CallerReach | None = None,
        approval: ApprovalGate | None = None,
        calls: ClientCalls | None = None,
        max_result_chars: int = DEFAULT_GATEWAY_MAX_RESULT_CHARS,
    ) -> None:
        """`reach`: what the client of each request may use (None: every offered tool);
        `max_result_chars`: longer results reach the client cut, with a note (as an agent's do)."""
        self._toolbox = toolbox
        self._sessions = sessions
        self._offers = offers
        self._record = record
        self._timeout = timeout
        self._reach = reach or CallerReach(toolbox, offers)
        self._approval = approval
        self._calls = calls or ClientCalls()
        self._parking = self._calls.parking
        self._max_result_chars = max_result_chars

    async def list_tools(
        self, ctx: ServerRequestContext, params: mcp.PaginatedRequestParams | None
    ) -> mcp.ListToolsResult:
        self._calls.seen(ctx)
        registry, _ = await self._sessions.registry_for(ctx)
        rule = self._reach.rule()
        specs = [spec for spec in await self._offered(registry) if self._reach.may_use(rule, spec)]
        return mcp.ListToolsResult(tools=[self._definition(spec, registry) for spec in specs])

    def _definition(self, spec: ToolSpec, registry: ToolRegistry) -> mcp.Tool:
        """The server's own definition (icons, `execution`, `_meta` kept) under the gateway's name."""
        listed = self._listed(spec, registry)
        return listed.model_copy(update={"name": spec.name}) if listed is not None else tool_to_mcp(spec)

    def _listed(self, spec: ToolSpec, registry: ToolRegistry) -> mcp.Tool | None:
        """The tool as its server listed it (None: a native tool, or one not listed by this session)."""
        if spec.source == NATIVE_SOURCE:
            return None
        pool = registry.pool or self._toolbox.pool
        return pool.connection(spec.source).mcp_tool(spec.original_name or spec.name)

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """The input schema of the tool clients call as `name` (None: not offered, or not listed yet),
        for the SDK's check of `Mcp-Param-*` headers (2026-07-28 over HTTP), which runs before every
        call: without it the SDK would run the whole `tools/list` handler on every call to find it."""
        registry = self._toolbox.registry
        spec = registry.find_listed(name)
        if spec is None or not self._offers(spec):
            return None
        # The schema as listed: a renamed copy of the whole tool would cost more than the check.
        listed = self._listed(spec, registry)
        return listed.input_schema if listed is not None else tool_to_mcp(spec).input_schema

    async def _offered(self, registry: ToolRegistry) -> list[ToolSpec]:
        return [spec for spec in await registry.list_tools() if self._offers(spec)]

    async def call_tool(
        self, ctx: ServerRequestContext, params: mcp.CallToolRequestParams
    ) -> mcp.CallToolResult | mcp.InputRequiredResult:
        parked = self._parking.take(params.request_state)
        if parked is not None:  # the next round of a call whose upstream server asked the client something
            parked.answer(params.input_responses)
            parked.ctx = ctx
            return await self._follow(parked)
        started_at, started = datetime.now(UTC), time.perf_counter()
        call = ToolCall(name=params.name, arguments=params.arguments or {})
        registry, cache_scope = await self._sessions.registry_for(ctx)
        found = await self._resolve(params.name, registry)
        if not isinstance(found, ToolSpec):
            kind, message = found
            refused = ToolResult.error(call.id, message, kind=kind, duration=time.perf_counter() - started)
            return self._answer(call, Answer(refused), started_at)
        spec = found
        verdict = await self._approval.check(ctx, params, spec) if self._approval else None
        if isinstance(verdict, mcp.InputRequiredResult):
            return verdict  # the client asks its user and calls again with the answer
        if isinstance(verdict, Refused):
            duration = time.perf_counter() - started
            denied = ToolResult.error(
                call.id, verdict.message, kind="denied", server=spec.source, duration=duration
            )
            return self._answer(call, Answer(denied), started_at)

        def upstream(
            waiting: Callable[[], ServerRequestContext], parked: ParkedCall | None = None
        ) -> Awaitable[Answer]:
            return self._call_upstream(waiting, call, spec, registry, cache_scope, parked)

        if self._parking.is_open and _answers_in_rounds(ctx):
            # The upstream server may ask the client something, which on this revision takes rounds.
            parked = self._parking.start(
                call, spec.source, started_at, ctx, lambda parked: upstream(lambda: parked.ctx, parked)
            )
            return await self._follow(parked)
        try:
            return self._answer(call, await upstream(lambda: ctx), started_at)
        except anyio.get_cancelled_exc_class():
            self._record_cancelled(call, spec.source, started_at)
            raise

    def _answer(self, call: ToolCall, answer: Answer, started_at: datetime) -> mcp.CallToolResult:
        if self._record is not None:
            self._record(call, answer.result, started_at)
        # The server's own answer when there is one: it keeps what the neutral result has no place for
        # (content annotations, resource link names, `_meta`).
        return answer.sent or call_result_to_mcp(answer.result)

    async def _call_upstream(
        self,
        waiting: Callable[[], ServerRequestContext],
        call: ToolCall,
        spec: ToolSpec,
        registry: ToolRegistry,
        cache_scope: str | None,
        parked: ParkedCall | None = None,
    ) -> Answer:
        """Route the call; `waiting` is the client's request waiting on it now (told the progress)."""

        async def relay(progress: ToolProgress) -> None:
            # A no-op unless the client sent a progress token with its call.
            await waiting().session.report_progress(progress.progress, progress.total, progress.message)

        with self._calls.calling(waiting(), spec.source, parked), raw_tool_results() as sent:
            result = await registry.call(
                call, timeout=self._timeout, cache_scope=cache_scope, on_progress=relay
            )
        return self._capped(Answer(result, sent[-1] if sent else None), spec)

    def _capped(self, answer: Answer, spec: ToolSpec) -> Answer:
        """The answer, or, over the limit, what fits of its text with a note saying what to do (what the
        client gets and the call log keeps)."""
        limit = self._max_result_chars
        capped, cut = answer.result.truncated(limit, size=sent_size(answer.result, limit))
        if not cut:
            return answer
        # Cut, it has no structured content, which a tool with an output schema must send (clients
        # check it): then it is an error result, which they take as it is.
        return Answer(capped.model_copy(update={"is_error": True}) if spec.output_schema else capped)

    async def _follow(self, parked: ParkedCall) -> mcp.CallToolResult | mcp.InputRequiredResult:
        """Wait for a parked call's result, or for questions its server asks the client meanwhile."""
        try:
            step = await parked.next_step()
        except anyio.get_cancelled_exc_class():
            parked.scope.cancel()
            self._record_cancelled(parked.call, parked.server, parked.started_at)
            raise
        if isinstance(step, Answer):
            return self._answer(parked.call, step, parked.started_at)
        return mcp.InputRequiredResult(input_requests=step, request_state=self._parking.keep(parked))

    def _record_cancelled(self, call: ToolCall, server: str, started_at: datetime) -> None:
        """The client cancelled the call (the upstream call was cancelled with it): logged as such."""
        if self._record is not None:
            elapsed = (datetime.now(UTC) - started_at).total_seconds()
            cancelled = ToolResult.error(
                call.id, "The client cancelled the call.", kind="cancelled", server=server, duration=elapsed
            )
            with suppress(Exception):  # a failing log must not hide the cancellation
                self._record(call, cancelled, started_at)

    async def _resolve(self, name: str, registry: ToolRegistry) -> ToolSpec | tuple[ToolErrorKind, str]:
        """The tool the caller may call as `name`, or why it may not. Only that tool is checked against
        the filters: matching every tool's name against their patterns on every call would cost more
        than the call."""
        rule = self._reach.rule()
        spec = await registry.find(name)
        if spec is not None and self._offers(spec):
            if rule is None or self._reach.may_use(rule, spec):
                return spec
            return "denied", (
                f"Tool {name!r} is not among the tools the token {rule[0]!r} may use; list them with "
                "tools/list, or ask whoever runs the gateway to allow it (gateway.tokens in its config)."
            )
        specs = await registry.list_tools()
        count = sum(1 for spec in specs if self._offers(spec) and self._reach.may_use(rule, spec))
        return "unknown_tool", (
            f"Unknown tool {name!r}: this gateway offers {count} tools; "
            "list them with tools/list and call one by its exact name."
        )


def _answers_in_rounds(ctx: ServerRequestContext) -> bool:
    """Whether an upstream server's question during this call would reach the client in rounds of
    `input_required` (2026-07-28), so the call must run parked. A client that offers neither sampling,
    elicitation nor roots can answer nothing: its calls run in its own request, at no extra cost."""
    session = ctx.session
    if session.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    offered = session.client_capabilities
    return offered is not None and any(
        capability is not None for capability in (offered.sampling, offered.elicitation, offered.roots)
    )
