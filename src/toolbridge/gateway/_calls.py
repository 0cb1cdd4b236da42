"""The gateway's clients' calls in flight, and the MCP sessions they come from, so that
what an upstream server sends its client (log messages, a finished URL elicitation) reaches the
downstream client whose call caused it.

An upstream log message during a gateway call on that server goes to the client that made the call, on
that call's stream; outside any call it goes to every connected client that can take it (on the
2026-07-28 revision a server may log only within a request, so those clients hear it with their calls).
Each client gets the levels it asked for: `logging/setLevel` on the 2025 revisions, the request's
log level on 2026-07-28.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import mcp_types as mcp
from mcp.server.connection import Connection, allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolbridge.gateway._parking import ParkedCall, ParkingLot
from toolbridge.mcp._sdk import connection_of as sdk_connection_of
from toolbridge.mcp.calls_in_flight import asking_call
from toolbridge.tools import CallRecord

__all__ = ["CURRENT_CALL", "ClientCalls", "DownstreamCall"]

logger = logging.getLogger(__name__)

_LEVELS: list[mcp.LoggingLevel] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
]
_ROOTS = mcp.ClientCapabilities(roots=mcp.RootsCapability())
_LEVEL_KEY = "toolbridge.gateway.log_level"
"""Where a connection's `logging/setLevel` is kept, in the SDK's per-connection `state`."""


@dataclass(eq=False)
class DownstreamCall:
    """One request a downstream client made, running on an upstream server: a `tools/call`, or a
    prompt or resource read passed on (`upstream` names its server)."""

    ctx: ServerRequestContext[Any, Any]
    parked: ParkedCall | None = None
    """On 2026-07-28: where the upstream server's questions to the client wait for the client's next round."""
    record: CallRecord | None = None
    """The call as the pipeline follows it (`ClientCalls.call_started`): it names the tool once resolved."""
    upstream: str | None = None
    """The server of a request that is not a tool call."""

    @property
    def server(self) -> str | None:
        """The upstream server that runs it (`native` for toolbridge's own tools; None: not resolved yet)."""
        tool = self.record.tool if self.record is not None else None
        return tool.source if tool is not None else self.upstream


CURRENT_CALL: ContextVar[DownstreamCall | None] = ContextVar("toolbridge_gateway_call", default=None)
"""The downstream call the current task runs (set around routing it upstream)."""


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The connection (one per downstream client) a request came on."""
    return sdk_connection_of(ctx.session)


class ClientCalls:
    """The downstream clients and their calls in flight. Installed on the toolbox's observers (`Gateway`),
    it learns which tool each call resolved to, and so which server's messages concern its client."""

    def __init__(self) -> None:
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self._calls: list[DownstreamCall] = []
        self.parking = ParkingLot()
        """Where calls wait for their client's next round (2026-07-28); open while the gateway serves."""

    def seen(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Note the client a request came from (it then hears log messages sent outside calls)."""
        self._connections.add(connection_of(ctx))

    @contextmanager
    def calling(
        self,
        ctx: ServerRequestContext[Any, Any],
        parked: ParkedCall | None = None,
        *,
        server: str | None = None,
    ) -> Iterator[DownstreamCall]:
        """Around running one downstream call through the pipeline, or (`server`) passing a prompt or a
        resource read on to that server."""
        self.seen(ctx)
        call = DownstreamCall(ctx, parked, upstream=server)
        token = CURRENT_CALL.set(call)
        self._calls.append(call)
        try:
            yield call
        finally:
            self._calls.remove(call)
            CURRENT_CALL.reset(token)

    def call_started(self, record: CallRecord) -> None:
        """A pipeline call started: when it is the current downstream call, that call follows it."""
        call = CURRENT_CALL.get()
        if call is not None and call.record is None and record.context.caller == "gateway":
            call.record = record

    async def call_ended(self, record: CallRecord) -> None:
        pass

    def calls_on(self, server: str) -> list[DownstreamCall]:
        return [call for call in self._calls if call.server == server]

    def asking(self, server: str) -> DownstreamCall | None:
        """In a `ClientFeatures` handler: the call a request from `server` was made during, or None when
        it asked outside calls or during one of several that cannot be told apart (see `calls_in_flight`)."""
        made = asking_call()
        call = made.context.get(CURRENT_CALL) if made is not None else None
        if call is not None and any(call is running for running in self._calls):
            return call
        # Asked in the task of the request itself: the SDK answering the server's `input_required`
        # (for a prompt or a read too, which the session's calls in flight do not know).
        current = CURRENT_CALL.get()
        if (
            current is not None
            and current.server == server
            and any(current is running for running in self._calls)
        ):
            return current
        calls = self.calls_on(server)
        return calls[0] if len(calls) == 1 else None

    async def roots_of_any_client(self) -> mcp.ListRootsResult | None:
        """The roots of the first connected client that can be asked outside a call and has some."""
        for connection in list(self._connections):
            if not connection.has_standalone_channel or not connection.check_capability(_ROOTS):
                continue
            try:
                return await connection.send_request(mcp.ListRootsRequest())
            except Exception:  # that client failed to answer: try the next
                logger.debug("a client did not list its roots", exc_info=True)
        return None

    async def set_level(
        self, ctx: ServerRequestContext[Any, Any], params: mcp.SetLevelRequestParams
    ) -> mcp.EmptyResult:
        """`logging/setLevel` (2025 revisions): the least severe level this client wants to hear."""
        self.seen(ctx)
        connection_of(ctx).state[_LEVEL_KEY] = params.level
        return mcp.EmptyResult()

    async def forward_log(self, server: str, params: mcp.LoggingMessageNotificationParams) -> None:
        """An upstream server's `notifications/message`, to the client(s) whose call on it runs, or to all,
        at the levels each asked for; the logger names the server."""
        named = params.model_copy(update={"logger": f"{server}.{params.logger}" if params.logger else server})
        await self._notify(server, mcp.LoggingMessageNotification(params=named), level=params.level)

    def elicitation_completed(self, server: str, elicitation_id: str) -> None:
        """An upstream server finished a URL-mode elicitation: its client is told, when it can be."""
        notification = mcp.ElicitCompleteNotification(
            params=mcp.ElicitCompleteNotificationParams(elicitation_id=elicitation_id)
        )
        self.parking.spawn(self._notify, server, notification)

    async def _notify(
        self, server: str, notification: mcp.ServerNotification, *, level: mcp.LoggingLevel | None = None
    ) -> None:
        calls = self.calls_on(server)
        if calls:
            # Several calls on one server: nobody can tell which it concerns, so each client making one hears it.
            first_per_client = {connection_of(call.ctx): call for call in reversed(calls)}
            for call in first_per_client.values():
                await _send_in_call(call, notification, level)
            return
        for connection in list(self._connections):
            await _send_outside_calls(connection, notification, level)


def _wanted(connection: Connection, level: mcp.LoggingLevel | None) -> bool:
    if level is None:
        return True
    threshold: mcp.LoggingLevel = connection.state.get(_LEVEL_KEY, "debug")
    return _LEVELS.index(level) >= _LEVELS.index(threshold)


async def _send_in_call(
    call: DownstreamCall, notification: mcp.ServerNotification, level: mcp.LoggingLevel | None
) -> None:
    # A call in rounds (2026-07-28) is waited on by the client's latest request.
    ctx = call.parked.ctx if call.parked is not None else call.ctx
    session = ctx.session
    # On 2026-07-28 the call's own `_meta` says which log levels it takes; before, `logging/setLevel` does.
    if level is not None and level not in allowed_log_levels(session.protocol_version, ctx.meta):
        return
    if not _wanted(connection_of(ctx), level):
        return
    try:
        await session.send_notification(notification, ctx.request_id)
    except Exception:  # the call may have ended meanwhile; a lost notification must not fail anything
        logger.debug("could not pass %s to the client", notification.method, exc_info=True)


async def _send_outside_calls(
    connection: Connection, notification: mcp.ServerNotification, level: mcp.LoggingLevel | None
) -> None:
    # On 2026-07-28 a server may notify a client only within its requests.
    if connection.protocol_version in MODERN_PROTOCOL_VERSIONS or not _wanted(connection, level):
        return
    wire = notification.model_dump(by_alias=True, mode="json", exclude_none=True)
    await connection.notify(wire["method"], wire.get("params"))  # drops what it cannot deliver
