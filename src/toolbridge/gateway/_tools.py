"""The gateway's tools: the registry's tools as its clients see them, and calls routed through it.

A call is the call pipeline's (`toolbridge.tools.pipeline`): the name resolved once, among the tools
this client may use (what the gateway offers, narrowed by a named HTTP token's reach: `_reach`), the
approval policy answered by asking the client (`_approval`), arguments validated, the result cache,
timeouts, and the observers (the call log, spans, metrics). The registry is the toolbox's, or the client
session's own where servers are configured `"shared": false` (see `_sessions`). While a call runs its
upstream server's progress, log messages and requests go to the client that made it (`_calls`), and
the server sees that client's capabilities; on 2026-07-28 a 2026-07-28 server's `input_required` goes
to the client as the server gave it (`_passthrough`), and a call to an older server whose client can be
asked something runs in the parking lot between the client's rounds (`_parking`). The client gets the server's own `CallToolResult` when one came; a result over
`max_result_chars` reaches it cut, with a note, as an agent's model sees one (`ToolResult.truncated`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as mcp
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolbridge.config.gateway import DEFAULT_GATEWAY_MAX_RESULT_CHARS
from toolbridge.gateway._approval import ApprovalGate
from toolbridge.gateway._calls import ClientCalls
from toolbridge.gateway._convert import call_result_to_mcp, sent_size, tool_to_mcp
from toolbridge.gateway._parking import ParkedCall, Reply
from toolbridge.gateway._passthrough import answers_in_rounds, passed_through, passthrough_for
from toolbridge.gateway._reach import CallerReach
from toolbridge.gateway._sessions import DownstreamSessions
from toolbridge.gateway._tasks import note_progress
from toolbridge.mcp import CallOutcome, ToolProgress
from toolbridge.mcp._sdk import Passthrough, UpstreamRefused
from toolbridge.tools import CallContext, CallDeferred, Toolbox, ToolPipeline, ToolRegistry
from toolbridge.types import NATIVE_SOURCE, ToolCall, ToolSpec

__all__ = ["LEFT_OUT", "GatewayTools", "ToolOffer"]

ToolOffer = Callable[[ToolSpec], bool]
"""Whether the gateway offers a tool (an agent's servers and tool filter, `--no-native`)."""

LEFT_OUT = "this gateway does not offer it"
"""Why a tool the gateway does not offer may not be called, unless its builder says better."""


class GatewayTools:
    def __init__(
        self,
        toolbox: Toolbox,
        sessions: DownstreamSessions,
        *,
        offers: ToolOffer,
        left_out: str = LEFT_OUT,
        timeout: float | None = None,
        reach: CallerReach | None = None,
        approval: ApprovalGate | None = None,
        calls: ClientCalls | None = None,
        max_result_chars: int = DEFAULT_GATEWAY_MAX_RESULT_CHARS,
    ) -> None:
        """`left_out`: why a tool `offers` leaves out may not be called; `reach`: what the client of each
        request may use (None: every offered tool); `max_result_chars`: longer results reach the
        client cut, with a note (as an agent's do)."""
        self._toolbox = toolbox
        self._sessions = sessions
        self._offers = offers
        self._left_out = left_out
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
        call = ToolCall(name=params.name, arguments=params.arguments or {})
        registry, cache_scope = await self._sessions.registry_for(ctx)
        gate = self._approval
        context = CallContext(
            caller="gateway",
            cache_scope=cache_scope,
            timeout=self._timeout,
            allows=self._reach.tool_filter(self._left_out),
            approval=gate.policy if gate is not None else None,
            approve=gate.approver(ctx, params) if gate is not None else None,
        )
        pipeline = self._toolbox.pipeline(registry)
        relays = answers_in_rounds(ctx) and await self._relays_rounds(call, context, registry)
        held = params.request_state is not None and gate is not None and gate.holds(params.request_state)
        if relays and not held:
            passthrough = passthrough_for(ctx, params.input_responses, params.request_state)
        else:  # any answers are to the gateway's own question (or there are none)
            if params.request_state is not None and not held:
                raise _unknown_state()
            passthrough = passthrough_for(ctx, relays=relays)
        if self._parking.is_open and _may_be_asked(ctx) and not relays:
            # The upstream server may ask the client something mid-call, which on this revision takes rounds.
            parked = self._parking.start(
                call, ctx, lambda parked: self._run(pipeline, call, context, ctx, passthrough, parked)
            )
            return await self._follow(parked)
        return await self._run(pipeline, call, context, ctx, passthrough)

    async def _relays_rounds(self, call: ToolCall, context: CallContext, registry: ToolRegistry) -> bool:
        """Whether the server's `input_required` goes to the (2026-07-28) client as the server gave it,
        and the client's next call to the server unchanged: the tool's server speaks 2026-07-28 too, and
        the call needs no approval (an approved call's later rounds would be asked about again; the
        gateway answers its server's questions then, asking the client its own, as for a 2025 server)."""
        # As last listed (a dictionary look-up; listed first if need be): resolving the name again would
        # cost every call a second resolution. The pipeline refuses what this client may not call.
        spec = registry.find_listed(call.name)
        if spec is None:
            await registry.list_tools()
            spec = registry.find_listed(call.name)
        if spec is None or spec.source == NATIVE_SOURCE:
            return False
        policy = context.approval
        if policy is not None and policy.approval_reason(spec) is not None:
            return False
        pool = registry.pool or self._toolbox.pool
        return pool.connection(spec.source).protocol_version in MODERN_PROTOCOL_VERSIONS

    async def _run(
        self,
        pipeline: ToolPipeline,
        call: ToolCall,
        context: CallContext,
        ctx: ServerRequestContext,
        passthrough: Passthrough,
        parked: ParkedCall | None = None,
    ) -> Reply:
        """Run the call; progress goes to the client's request waiting on it now (a parked call's latest).
        The upstream server's `input_required` for a 2026-07-28 client is the reply as it came."""

        async def relay(progress: ToolProgress) -> None:
            note_progress(progress.message)  # a task of the gateway's says it as its statusMessage
            # A no-op unless the client sent a progress token with its call.
            waiting = parked.ctx if parked is not None else ctx
            await waiting.session.report_progress(progress.progress, progress.total, progress.message)

        with self._calls.calling(ctx, parked) as downstream:
            try:
                outcome = await passed_through(
                    passthrough, lambda: pipeline.call(call, context.but(on_progress=relay))
                )
            except CallDeferred as deferred:  # the client asks its user and calls again with the answer
                if not isinstance(deferred.reply, mcp.InputRequiredResult):
                    raise
                return deferred.reply
            except UpstreamRefused as refused:  # an error the client acts on (its capabilities, its state)
                raise refused.error from None
            if isinstance(outcome, mcp.InputRequiredResult):
                return outcome
        tool = downstream.record.tool if downstream.record is not None else None
        return self._reply(outcome, tool)

    def _reply(self, outcome: CallOutcome, tool: ToolSpec | None) -> mcp.CallToolResult:
        """The server's own answer when there is one: it keeps what the neutral result has no place for
        (content annotations, resource link names, `_meta`). Over the limit, what fits of its text with
        a note saying what to do."""
        result, limit = outcome.result, self._max_result_chars
        capped, cut = result.truncated(limit, size=sent_size(result, limit))
        if not cut:
            return outcome.raw or call_result_to_mcp(result)
        # Cut, it has no structured content, which a tool with an output schema must send (clients
        # check it): then it is an error result, which they take as it is.
        if tool is not None and tool.output_schema:
            capped = capped.model_copy(update={"is_error": True})
        return call_result_to_mcp(capped)

    async def _follow(self, parked: ParkedCall) -> Reply:
        """Wait for a parked call's reply, or for questions its server asks the client meanwhile."""
        try:
            step = await parked.next_step()
        except anyio.get_cancelled_exc_class():
            parked.scope.cancel()  # the client cancelled: the call with it (the pipeline logs it so)
            raise
        if isinstance(step, dict):
            return mcp.InputRequiredResult(input_requests=step, request_state=self._parking.keep(parked))
        if isinstance(step, MCPError):
            raise step
        return step


def _unknown_state() -> MCPError:
    """A `requestState` the gateway did not give, for a call whose server's cannot reach the client
    (see `_relays_rounds`): running the call anew would answer a client that believes it is continuing
    one (and hide tampering)."""
    return MCPError(
        INVALID_PARAMS,
        "The requestState of this call is not one the toolbridge gateway gave, or its call has ended "
        "(the answer came too late, or was given already): call the tool again without requestState "
        "and inputResponses.",
    )


def _may_be_asked(ctx: ServerRequestContext) -> bool:
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
