"""`ServerConnection`: one MCP server, one kept session, reconnected once when it dies."""

from __future__ import annotations

import time
import warnings
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Literal, Self, TypeVar

import anyio
import anyio.abc
import mcp_types

from toolbridge.config.model import ServerConfig
from toolbridge.errors import (
    AuthenticationError,
    ConnectionLostError,
    ServerError,
    ServerStartError,
    UsageError,
)
from toolbridge.mcp._backoff import StartBackoff
from toolbridge.mcp._failures import backing_off, call_lost_message
from toolbridge.mcp._listings import ListChangeHandler, ListKind
from toolbridge.mcp._live_session import LiveSession
from toolbridge.mcp._request import request_once
from toolbridge.mcp._revision import speaks_stateless_revision
from toolbridge.mcp._sdk import PASSTHROUGH
from toolbridge.mcp._task_group import exit_task_group
from toolbridge.mcp._tool_call import (
    RETRIED_NOTE,
    CallOutcome,
    LostCall,
    ServerCall,
    call_once,
    unavailable,
)
from toolbridge.mcp.client_features import NO_FEATURES, ClientFeatures
from toolbridge.mcp.progress import ProgressHandler
from toolbridge.mcp.resources_and_prompts import ServerContent
from toolbridge.mcp.server_log import ServerLog
from toolbridge.types import ToolResult, ToolSpec

__all__ = ["ConnectionState", "ServerConnection"]

T = TypeVar("T")

ConnectionState = Literal["disabled", "disconnected", "connecting", "connected", "failed", "closed"]


class ServerConnection:
    """A connection to one MCP server that keeps its session between calls.

    ```python
    async with ServerConnection(config) as server:
        tools = await server.list_tools()
        result = await server.call_tool("echo", {"text": "hi"}, call_id="call_1")
    ```
    It connects on first use. When the session dies (the process exits, the stream closes) the
    next use reconnects once; a call lost that way is resent only if the tool says it is read-only
    or idempotent. Tool errors, timeouts and lost calls come back as error `ToolResult`s; failing to
    connect raises a `ServerError`. A stdio server that keeps failing to start is started again only
    after a growing wait (see `_backoff`); `clock` is what measures it.

    A `ServerPool` passes its task group; used alone, enter it with `async with`.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        task_group: anyio.abc.TaskGroup | None = None,
        on_tools_changed: Callable[[str], None] | None = None,
        on_list_changed: ListChangeHandler | None = None,
        features: ClientFeatures = NO_FEATURES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`on_tools_changed(server)`: the tool list changed (the registry relists it);
        `on_list_changed(server, kind)`: any list changed (tools, resources, prompts), told after."""
        self.config = config
        self.features = features
        """What this client offers the server (sampling, elicitation, roots, logs)."""
        self._backoff = StartBackoff(clock)
        self._task_group = task_group
        self._on_tools_changed = on_tools_changed
        self._on_list_changed = on_list_changed
        self._own_task_group: anyio.abc.TaskGroup | None = None
        self._session_config = config
        self.log = ServerLog(config.name)
        """The last messages the server logged to us (`notifications/message`), across reconnects."""
        self._live: LiveSession | None = None
        self._handshake_twin: ServerConnection | None = None
        """A session of the 2025-11-25 revision beside a 2026-07-28 one, for passed-on calls of clients
        of that revision (see `_twin_for`); opened on the first such call."""
        self._connect_lock = anyio.Lock()
        self._closed = False
        self.content = ServerContent(self)
        """The server's resources and prompts: list, read, subscribe, get, complete."""

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def task_group(self) -> anyio.abc.TaskGroup | None:
        """Where this connection's sessions (and handlers of their notifications) run."""
        return self._task_group

    @property
    def state(self) -> ConnectionState:
        live = self._live
        if self._closed:
            return "closed"
        if not self.config.enabled:
            return "disabled"
        if self.config.unresolved:
            return "failed"
        if live is None:
            return "disconnected"
        if live.usable:
            return "connected"
        if not live.ready.is_set():
            return "connecting"
        return "failed" if live.error is not None else "disconnected"

    @property
    def last_error(self) -> str | None:
        """Why the server is not connected: its failed start, or how its last session ended."""
        live = self._live
        if self.config.enabled and self.config.unresolved:
            return self.config.unresolved[0]
        if live is not None and live.ready.is_set() and live.error is not None:
            return str(live.error)
        if live is None or not live.done.is_set():
            return None
        if live.end_reason is not None:
            return f"The session ended: {live.end_reason}."
        return None

    @property
    def transport(self) -> str:
        """The transport in use: the config's, or `sse` once a server without a configured type
        turned out to speak only that."""
        return self._session_config.transport

    @property
    def protocol_version(self) -> str | None:
        """The MCP revision the current session speaks (`2026-07-28`, `2025-11-25`, ...), None unconnected."""
        session = self._live.session if self._live is not None else None
        return session.protocol_version if session is not None else None

    @property
    def needs_sign_in(self) -> bool:
        """The server wants an OAuth sign-in that was not given (see `toolbridge.mcp.oauth`)."""
        live = self._live
        return live is not None and isinstance(live.error, AuthenticationError)

    @property
    def ignored_messages(self) -> int:
        """How many lines or messages the current session skipped because they were not JSON-RPC."""
        return self._live.ignored_messages if self._live is not None else 0

    def stderr_tail(self, lines: int = 20) -> str:
        """The last lines a stdio server wrote to stderr (empty for HTTP servers)."""
        live = self._live
        return live.stderr.tail(lines) if live is not None and live.stderr is not None else ""

    @property
    def stderr_dropped(self) -> int:
        """Bytes of a stdio server's stderr dropped to keep only its last 64 KB (this session)."""
        live = self._live
        return live.stderr.dropped if live is not None and live.stderr is not None else 0

    async def __aenter__(self) -> Self:
        if self._task_group is None:
            task_group = anyio.create_task_group()
            await task_group.__aenter__()
            self._task_group = self._own_task_group = task_group
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        own, self._own_task_group = self._own_task_group, None
        suppress: bool | None = None
        try:
            await self.close()
        finally:
            if own is not None:
                suppress = await exit_task_group(own, exc_type, exc, tb)
        return suppress

    async def connect(self) -> None:
        """Start the server (or reach it) and complete the MCP handshake, unless already connected.

        Raises `ServerStartError` or `ServerTimeoutError` when that fails.
        """
        await self._connected()

    async def wait_session_ended(self) -> None:
        """Wait until the current session has ended and its process is gone (returns at once if none).

        For watchers: a server that dies while idle is noticed here, not only by the next call.
        """
        if self._live is not None:
            await self._live.done.wait()

    async def list_tools(self, *, refresh: bool = False) -> list[ToolSpec]:
        """The server's tools, cached for the session until the server says its list changed."""

        async def list_all(live: LiveSession) -> list[ToolSpec]:
            if refresh:
                live.forget_tools()
            return await _list_tools(live)

        return await self.request(LISTING_TOOLS, list_all, method="tools/list")

    @property
    def tools_expired(self) -> bool:
        """The tool listing's 2026-07-28 cache hint has run out (the next `list_tools` asks the server)."""
        live = self._live
        return live is not None and live.tools_expired

    def mcp_tool(self, name: str) -> mcp_types.Tool | None:
        """The tool as the server last listed it, every field kept (icons, `execution`, `_meta`);
        None when this session has not listed it."""
        live = self._live
        return live.mcp_tools.get(name) if live is not None else None

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        call_id: str,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ToolResult:
        """Run one tool; its neutral result (see `call_tool_mcp` for the server's own answer too)."""
        outcome = await self.call_tool_mcp(
            name, arguments, call_id=call_id, timeout=timeout, on_progress=on_progress
        )
        return outcome.result

    async def call_tool_mcp(
        self,
        name: str,
        arguments: dict[str, Any],
        *,
        call_id: str,
        # Not a cancel scope: the SDK turns it into an MCP request timeout that also cancels the
        # call at the server, and the outcome is an error result rather than an exception.
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> CallOutcome:
        """Run one tool: its neutral result, and the `CallToolResult` the server sent (when it sent one).
        `timeout` (seconds) overrides the server's default per-call timeout.

        Every call carries a progress token; `on_progress` is told the server's reports. With
        `timeout_resets_on_progress` in the config, each report restarts the timeout.
        """
        limit = self.config.timeout if timeout is None else timeout
        started = time.perf_counter()
        live = self._live
        if live is None or not live.usable:  # the common case needs no trip through the connect lock
            live = await self._connected()
        twin = self._twin_for(live)
        if twin is not None:
            return await twin.call_tool_mcp(
                name, arguments, call_id=call_id, timeout=timeout, on_progress=on_progress
            )
        call = ServerCall(name, arguments, call_id, limit, on_progress)
        outcome = await call_once(live, self.config, call)
        if not isinstance(outcome, LostCall):
            return outcome
        return await self._after_lost(live, call, outcome, started=started)

    def _twin_for(self, live: LiveSession) -> ServerConnection | None:
        """The connection a call passed on for a client of a 2025 revision goes over when this session
        speaks 2026-07-28 (the config leaving the revision to negotiation): the server's questions can
        reach that client only mid-call, which only a session of the 2025 revision allows. Not for a stdio
        server: a second session would be a second process, whose state (its tools, its data) is not the
        first one's."""
        passthrough = PASSTHROUGH.get()
        client_revision = passthrough.client_revision if passthrough is not None else None
        session = live.session
        if (
            client_revision is None
            or speaks_stateless_revision(client_revision)
            or self.config.protocol != "auto"
            or self.config.transport == "stdio"
            or session is None
            or not speaks_stateless_revision(session.protocol_version)
        ):
            return None
        if self._handshake_twin is None:
            config = self.config.model_copy(update={"protocol": "2025-11-25"})
            self._handshake_twin = ServerConnection(
                config, task_group=self._task_group, features=self.features
            )
        return self._handshake_twin

    async def request(
        self, what: str, send: Callable[[LiveSession], Awaitable[T]], *, method: str | None = None
    ) -> T:
        """Send one request other than a tool call (a listing, or `ServerContent`'s), within the server's
        timeout.

        A session that died under it is replaced and the request sent once more (these requests only
        read). Failures raise a `ServerError` naming `what` ("reading 'file:///a'"), or `method`
        ("tools/list") for an answer that is not valid JSON-RPC.
        """
        live = await self._connected()
        try:
            return await request_once(live, self.config, what, send, method=method)
        except ConnectionLostError:
            await self._retire(live)
            return await request_once(await self._connected(), self.config, what, send, method=method)

    async def notify_roots_changed(self) -> None:
        """Tell the server its roots changed (`notifications/roots/list_changed`), if it is connected;
        one that connects later asks for them anyway."""
        live = self._live
        if live is not None and live.session is not None and live.usable:
            with warnings.catch_warnings():
                # The SDK marks roots deprecated for the 2026 revision; servers on 2025-11-25 use them.
                warnings.simplefilter("ignore")
                await live.session.send_roots_list_changed()

    async def close(self) -> None:
        """End the session and stop the server process. The connection cannot be used afterwards."""
        self._closed = True
        if self._handshake_twin is not None:
            await self._handshake_twin.close()
        live = self._live
        if live is not None:
            live.stop(closing=True)
            await live.done.wait()
            live.close_stderr()
        self.log.close()

    # -- internals ---------------------------------------------------------------------------

    async def _connected(self) -> LiveSession:
        """The live session, connecting first if there is none. One connect attempt per use."""
        live = self._live
        if live is not None and live.usable:
            return live
        self._check_usable()
        seen = live
        async with self._connect_lock:
            live = self._live
            if live is not None and live.usable:
                return live
            if live is not seen and live is not None and live.error is not None:
                # Someone else's attempt failed while we waited: report that, don't start another.
                raise live.error
            if live is not None and live.error is not None and self._backoff.wait_left() > 0:
                raise backing_off(self.config, live.error, self._backoff.failures, self._backoff.wait_left())
            if live is not None:
                await self._retire(live)
                live.close_stderr()
            self._check_usable()
            assert self._task_group is not None
            live = LiveSession(
                self._session_config,
                on_tools_changed=self._tools_changed,
                features=self.features,
                log=self.log,
            )
            live.listings.on_resource_updated = self.content.resource_updated
            live.listings.subscribed = lambda: self.content.subscribed
            live.listings.on_list_changed = self._list_changed
            self._live = live
            # The session outlives the request that connects it: none of that request's passthrough.
            token = PASSTHROUGH.set(None)
            try:
                self._task_group.start_soon(live.run, name=f"toolbridge MCP session {self.name!r}")
            finally:
                PASSTHROUGH.reset(token)
            await live.ready.wait()
            if live.fell_back_to_sse:
                # Reconnects go straight to the transport that worked.
                self._session_config = self.config.model_copy(
                    update={"transport": "sse", "sse_fallback": False}
                )
            self._note_start(live)
            if live.error is not None:
                raise live.error
            return live

    def _note_start(self, live: LiveSession) -> None:
        """Count a stdio server's failed start towards its backoff; a working one resets it."""
        if live.error is None:
            self._backoff.succeeded()
        elif self.config.transport == "stdio" and not isinstance(live.error, ConnectionLostError):
            # An interrupted start (ConnectionLostError) says nothing about the server.
            self._backoff.failed()

    def _check_usable(self) -> None:
        if self._closed:
            raise ConnectionLostError(
                f"The connection to server {self.name!r} is closed; open a new one to use the server.",
                server=self.name,
            )
        if not self.config.enabled:
            raise ServerError(
                f'Server {self.name!r} is disabled in the config; set "enabled": true to use it.',
                server=self.name,
            )
        if self.config.unresolved:
            # An unset `${VAR}` in its settings: starting it anyway would send the literal text.
            raise ServerStartError(self.config.unresolved[0], server=self.name)
        if self._task_group is None:
            raise UsageError("ServerConnection used outside 'async with' and without a task group")

    async def _retire(self, live: LiveSession) -> None:
        """Stop a session that failed under us and wait until its process is gone."""
        live.stop()
        await live.done.wait()

    async def _after_lost(
        self, live: LiveSession, call: ServerCall, lost: LostCall, *, started: float
    ) -> CallOutcome:
        """A call whose session died under it: a new session, on which the call is resent once if it
        never reached the server or the tool says it is read-only or idempotent."""
        await self._retire(live)
        # Once the old session is torn down we know how it ended (e.g. the exit code).
        why = live.end_reason or lost.why
        known = live.cached_tools
        try:
            fresh = await self._connected()
            if known is None:
                known = await request_once(
                    fresh, self.config, LISTING_TOOLS, _list_tools, method="tools/list"
                )
        except ServerError as exc:
            message = call_lost_message(self.name, call.name, why, restart_error=exc)
            return unavailable(call, self.name, message, started=started)
        if lost.task is not None:  # the server holds the call as a task: follow it, do not run it again
            resumed = await call_once(fresh, self.config, call, resume=lost.task)
            if not isinstance(resumed, LostCall):
                return resumed
            why = resumed.why
            message = call_lost_message(self.name, call.name, why, restart_error=None)
            return unavailable(call, self.name, message, started=started)
        spec = next((tool for tool in known if tool.name == call.name), None)
        if lost.sent and (spec is None or not spec.annotations.safe_to_retry):
            message = call_lost_message(self.name, call.name, why, restart_error=None)
            return unavailable(call, self.name, message, started=started)
        retried = await call_once(fresh, self.config, call)
        if not isinstance(retried, LostCall):
            noted = retried.result.model_copy(update={"notes": [*retried.result.notes, RETRIED_NOTE]})
            return CallOutcome(noted, retried.raw)
        await self._retire(fresh)
        why = fresh.end_reason or retried.why
        message = call_lost_message(self.name, call.name, why, restart_error=None, resent=True)
        return unavailable(call, self.name, message, started=started)

    def _tools_changed(self) -> None:
        if self._on_tools_changed is not None:
            self._on_tools_changed(self.name)
        self._list_changed("tools")

    def _list_changed(self, kind: ListKind) -> None:
        if self._on_list_changed is not None:
            self._on_list_changed(self.name, kind)


LISTING_TOOLS = "listing its tools"


async def _list_tools(live: LiveSession) -> list[ToolSpec]:
    assert live.session is not None  # request_once checked
    return await live.list_tools(live.session)
