"""The gateway's clients, and what it passes on to them: list changes and updates of resources they follow.

One `Downstream` serves one run of the gateway's server (over stdio one client; over HTTP every session
of the run): it is the SDK server's lifespan state, so every handler finds it as `ctx.lifespan_context`.
Clients on the 2025-11-25 revision are told on their session (the gateway remembers each session it has
seen until its connection closes); clients on the 2026-07-28 revision get the same news on the
`subscriptions/listen` streams they open.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as mcp
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolbridge.errors import ServerError
from toolbridge.gateway._resources import GatewayResources, UpstreamUri
from toolbridge.gateway._upstream import Upstream, upstream_error
from toolbridge.mcp import ListKind
from toolbridge.mcp._sdk import connection_of

__all__ = ["Downstream", "listen", "note_client", "subscribe_resource", "unsubscribe_resource"]

logger = logging.getLogger("toolbridge.gateway")

_EVENTS: dict[ListKind, ServerEvent] = {
    "tools": ToolsListChanged(),
    "resources": ResourcesListChanged(),
    "prompts": PromptsListChanged(),
}

_NOTIFICATIONS: dict[ListKind, Callable[[], mcp.ServerNotification]] = {
    "tools": mcp.ToolListChangedNotification,
    "resources": mcp.ResourceListChangedNotification,
    "prompts": mcp.PromptListChangedNotification,
}


@dataclass
class _Watch:
    """One upstream resource some clients follow, and how they know it."""

    shown_uri: str
    sessions: dict[Connection, ServerSession] = field(default_factory=dict)
    listens: int = 0
    """Open `subscriptions/listen` streams that name it."""
    deliver: Callable[[str, str], Awaitable[None]] | None = None

    @property
    def followed(self) -> bool:
        return bool(self.sessions) or self.listens > 0


class Downstream:
    def __init__(self, upstream: Upstream, resources: GatewayResources) -> None:
        self._upstream = upstream
        self._resources = resources
        self.bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self.bus)
        self._sessions: dict[Connection, ServerSession] = {}
        self._changed: set[ListKind] = set()
        self._wake = anyio.Event()
        self._watches: dict[UpstreamUri, _Watch] = {}
        self._watch_lock = anyio.Lock()

    # -- clients ------------------------------------------------------------------------------------

    def seen(self, ctx: ServerRequestContext[Any]) -> None:
        """Remember the session of a client on the older revision, until its connection closes."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # no session to tell: its news go on the listen streams it opens
        connection = connection_of(ctx.session)
        if connection not in self._sessions:
            self._sessions[connection] = ctx.session
            connection.exit_stack.push_async_callback(self._gone, connection)

    async def _gone(self, connection: Connection) -> None:
        self._sessions.pop(connection, None)
        for key, watch in list(self._watches.items()):
            if watch.sessions.pop(connection, None) is not None:
                await self._release(key)

    # -- list changes -------------------------------------------------------------------------------

    def list_changed(self, server: str, kind: ListKind) -> None:
        """Told by the toolbox (from an upstream session's task): pass it on from `relay_changes`."""
        if server in self._upstream.servers or kind == "tools":
            self._changed.add(kind)
            self._wake.set()

    async def relay_changes(self) -> None:
        """Tell every client about list changes, as they come; several of a kind in a row become one."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            changed, self._changed = self._changed, set()
            for kind in sorted(changed):
                await self.bus.publish(_EVENTS[kind])
                for session in list(self._sessions.values()):
                    await session.send_notification(_NOTIFICATIONS[kind]())

    # -- resource subscriptions ---------------------------------------------------------------------

    async def subscribe(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        key = await self._resources.route(uri)
        async with self._watch_lock:
            watch = await self._watch(key, uri)
            watch.sessions[connection_of(ctx.session)] = ctx.session

    async def unsubscribe(self, ctx: ServerRequestContext[Any], uri: str) -> None:
        key = await self._resources.route(uri)
        watch = self._watches.get(key)
        if watch is not None and watch.sessions.pop(connection_of(ctx.session), None) is not None:
            await self._release(key)

    async def listen(
        self, ctx: ServerRequestContext[Any], params: mcp.SubscriptionsListenRequestParams
    ) -> mcp.SubscriptionsListenResult:
        """Serve a `subscriptions/listen` stream, following upstream the resources it names (those that
        cannot be followed are left out of the acknowledgement, as the revision says)."""
        followed: list[tuple[UpstreamUri, str]] = []
        try:
            for uri in params.notifications.resource_subscriptions or []:
                try:
                    key = await self._resources.route(uri)
                    async with self._watch_lock:
                        watch = await self._watch(key, uri)
                        watch.listens += 1
                except MCPError as exc:
                    logger.info("not following %r for a listen stream: %s", uri, exc.error.message)
                    continue
                followed.append((key, uri))
            honored = params.notifications.model_copy(
                update={"resource_subscriptions": [uri for _, uri in followed] or None}
            )
            return await self._listen(ctx, params.model_copy(update={"notifications": honored}))
        finally:
            with anyio.CancelScope(shield=True):  # the stream ends by cancellation when the client leaves
                for key, _ in followed:
                    if (followed_watch := self._watches.get(key)) is not None:
                        followed_watch.listens -= 1
                    await self._release(key)

    async def _watch(self, key: UpstreamUri, shown_uri: str) -> _Watch:
        """The watch on an upstream resource, subscribing upstream first if nobody follows it yet."""
        if (watch := self._watches.get(key)) is not None:
            return watch
        watch = _Watch(shown_uri)

        async def deliver(server: str, uri: str) -> None:
            for session in list(watch.sessions.values()):
                await session.send_resource_updated(watch.shown_uri)
            if watch.listens:
                await self.bus.publish(ResourceUpdated(uri=watch.shown_uri))

        server, upstream_uri = key
        try:
            await self._upstream.content(server).subscribe(upstream_uri, deliver)
        except ServerError as exc:
            raise upstream_error(exc) from exc
        watch.deliver = deliver
        self._watches[key] = watch
        return watch

    async def _release(self, key: UpstreamUri) -> None:
        """Unsubscribe upstream from a resource no client follows any more."""
        async with self._watch_lock:
            watch = self._watches.get(key)
            if watch is None or watch.followed:
                return
            del self._watches[key]
        server, upstream_uri = key
        try:
            await self._upstream.content(server).unsubscribe(upstream_uri, watch.deliver)
        except ServerError as exc:
            logger.info("could not unsubscribe from %r: %s", upstream_uri, exc)

    async def aclose(self) -> None:
        """End the listen streams and every upstream subscription of this run."""
        self._listen.close()
        for key, watch in list(self._watches.items()):
            watch.sessions.clear()
            watch.listens = 0
            await self._release(key)


def downstream_of(ctx: ServerRequestContext[Any]) -> Downstream:
    state = ctx.lifespan_context
    assert isinstance(state, Downstream), "the gateway's server runs with its own lifespan"
    return state


async def note_client(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: every message from a client makes its session known (from `initialize` on)."""
    downstream_of(ctx).seen(ctx)
    return await call_next(ctx)


async def subscribe_resource(
    ctx: ServerRequestContext[Any], params: mcp.SubscribeRequestParams
) -> mcp.EmptyResult:
    await downstream_of(ctx).subscribe(ctx, str(params.uri))
    return mcp.EmptyResult()


async def unsubscribe_resource(
    ctx: ServerRequestContext[Any], params: mcp.UnsubscribeRequestParams
) -> mcp.EmptyResult:
    await downstream_of(ctx).unsubscribe(ctx, str(params.uri))
    return mcp.EmptyResult()


async def listen(
    ctx: ServerRequestContext[Any], params: mcp.SubscriptionsListenRequestParams
) -> mcp.SubscriptionsListenResult:
    return await downstream_of(ctx).listen(ctx, params)
