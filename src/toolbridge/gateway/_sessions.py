"""Upstream sessions per downstream session, for servers configured `"shared": false`.

Servers are shared by default: every client of the gateway calls them through the toolbox's one
session. A server that keeps state per client gets a session of its own for each client session,
opened on that session's first request and closed when it ends (the SDK unwinds the connection's
`exit_stack` then). A 2026-07-28 request over HTTP carries no session, so it is a session of its own.
Over stdio the gateway has one client, for whom the toolbox's sessions are its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from uuid import uuid4

import anyio
import anyio.abc
from mcp.server.context import ServerRequestContext

from toolbridge.mcp._sdk import connection_of
from toolbridge.tools import Toolbox, ToolRegistry

__all__ = ["DownstreamSessions"]

_STATE_KEY = "toolbridge.upstreams"


class _OwnUpstreams:
    """One downstream session's registry, whose unshared servers' sessions are its own."""

    def __init__(self, toolbox: Toolbox, task_group: anyio.abc.TaskGroup) -> None:
        self._toolbox = toolbox
        self._task_group = task_group
        self._lock = anyio.Lock()
        self._registry: ToolRegistry | None = None
        self._ended = anyio.Event()
        self.cache_scope = f"gateway-session-{uuid4().hex}"
        """Keeps cached results to this session: its servers' state is its own."""

    async def registry(self) -> ToolRegistry:
        async with self._lock:  # two first requests at once open one set of sessions
            if self._registry is None:
                # The sessions live in the gateway's task group: a task group must be left by the
                # task that entered it, and the SDK ends a connection from another task.
                self._registry = await self._task_group.start(self._hold)
            return self._registry

    async def _hold(self, *, task_status: anyio.abc.TaskStatus[ToolRegistry]) -> None:
        async with self._toolbox.own_sessions() as registry:
            task_status.started(registry)
            await self._ended.wait()

    async def end(self) -> None:
        """Close the sessions, without waiting: the SDK answers a request only once its connection's
        cleanup is done, and stopping a server process takes a while."""
        self._ended.set()


class DownstreamSessions:
    """Which registry serves a request: the toolbox's, or its session's own (see the module doc)."""

    def __init__(self, toolbox: Toolbox) -> None:
        self._toolbox = toolbox
        self._per_session = toolbox.has_unshared_servers
        self._task_group: anyio.abc.TaskGroup | None = None

    @asynccontextmanager
    async def running(self, *, one_client: bool = False) -> AsyncIterator[None]:
        """Hold the sessions' tasks; leaving closes every session still open. `one_client`: the
        toolbox's sessions serve one client alone (stdio), so they are that client's own."""
        per_session = self._per_session
        self._per_session = per_session and not one_client
        async with anyio.create_task_group() as task_group:
            self._task_group = task_group
            try:
                yield
            finally:
                self._task_group, self._per_session = None, per_session
                task_group.cancel_scope.cancel()

    async def registry_for(self, ctx: ServerRequestContext) -> tuple[ToolRegistry, str | None]:
        """The registry for this request, and the cache scope that keeps its results to its session
        (None: shared by every client)."""
        if not self._per_session:
            return self._toolbox.registry, None
        if self._task_group is None:
            raise RuntimeError("DownstreamSessions used outside `async with sessions.running():`")
        connection = connection_of(ctx.session)  # its state and exit stack are for per-connection data
        upstreams = connection.state.get(_STATE_KEY)
        if not isinstance(upstreams, _OwnUpstreams):
            upstreams = _OwnUpstreams(self._toolbox, self._task_group)
            connection.state[_STATE_KEY] = upstreams
            connection.exit_stack.push_async_callback(upstreams.end)
        return await upstreams.registry(), upstreams.cache_scope
