"""One attempt to reach a server and, when it works, the SDK session it made, from start to shutdown."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType

import anyio
import httpx2
import mcp_types as mcp
from mcp import Client, ClientSession, MCPError
from mcp.client.caching import MAX_TTL_MS, CacheConfig
from mcp.client.session import IncomingMessage
from mcp.shared.message import SessionMessage

from toolbridge._version import __version__
from toolbridge.config.model import ServerConfig
from toolbridge.errors import ConnectionLostError, ServerError
from toolbridge.mcp._convert import tool_spec_from_mcp
from toolbridge.mcp._failures import connect_timed_out, end_of_session, start_failure
from toolbridge.mcp._invalid_reply import invalid_reply_error, relabelled_sdk_parse_error
from toolbridge.mcp._listings import Listings
from toolbridge.mcp._log_limit import RateLimitedLog
from toolbridge.mcp._resource_listens import ResourceListens
from toolbridge.mcp._revision import (
    LISTEN_ACK_WAIT,
    STATELESS_LOG_LEVEL,
    connect_mode,
    follow_tool_changes,
    forget_revision,
    remember_revision,
    speaks_stateless_revision,
)
from toolbridge.mcp._sdk import ProbingClient
from toolbridge.mcp._session_auth import transport_auth
from toolbridge.mcp._stderr import StderrLog
from toolbridge.mcp._transports import TransportStreams, open_transport
from toolbridge.mcp._transports._http_status import CURRENT_WATCH, HttpStatusWatch, OldHttpServerError
from toolbridge.mcp._transports._streams import ReadStream
from toolbridge.mcp.calls_in_flight import CallsInFlight
from toolbridge.mcp.client_features import NO_FEATURES, ClientFeatures, session_callbacks
from toolbridge.mcp.server_log import ServerLog
from toolbridge.mcp.tasks import TasksExtension
from toolbridge.types import ToolSpec

__all__ = ["LiveSession"]

logger = logging.getLogger(__name__)

CLIENT_INFO = mcp.Implementation(name="toolbridge", version=__version__)


class LiveSession:
    """Owns one transport + `ClientSession` pair for its whole life.

    The SDK's context managers must be entered and exited by the same task, so `run()` is that
    task: it connects, publishes the session, then waits until it is told to stop or the transport
    ends. Callers in other tasks use `session` while `usable` is true.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        on_tools_changed: Callable[[], None],
        features: ClientFeatures = NO_FEATURES,
        log: ServerLog | None = None,
    ) -> None:
        self.config = config
        self.calls = CallsInFlight(config.name)
        """The tool calls in flight, so that a server's request can be told which one it belongs to."""
        self._callbacks = session_callbacks(features, config.name, self.calls)
        self._features = features
        self._on_elicitation_complete = features.on_elicitation_complete
        # One path for log messages: the server's log first, then the features' handler.
        self.log = log or ServerLog(config.name)
        self._callbacks["logging_callback"] = self.log.callback(features.on_log)
        # On 2026-07-28 the level rides on each request: the config's, else what a log handler asked for.
        handler_level = self._callbacks.pop("log_level", None)
        self._log_level = config.log_level or handler_level or STATELESS_LOG_LEVEL
        self.stderr = StderrLog(config.name) if config.transport == "stdio" else None
        self.session: ClientSession | None = None
        self.client: Client | None = None
        """The SDK's client around `session`: it negotiates the revision and drives input-required calls."""
        self.error: ServerError | None = None
        """Why the session could not be made (set when `ready` fires without a session)."""
        self.end_reason: str | None = None
        """Why a session that worked has ended, when it was not closed on purpose."""
        self.ignored_messages = 0
        """Server output that was not valid JSON-RPC (e.g. prints on a stdio server's stdout)."""
        self._ignored_log = RateLimitedLog(
            logger, logging.WARNING, source=f"server {config.name!r} non-JSON-RPC output"
        )
        self.ready = anyio.Event()
        self.done = anyio.Event()
        self._stop = anyio.Event()
        self._closing = False
        self._stop_requested = False
        self._on_tools_changed = on_tools_changed
        self._had_session = False
        self._last_heard = 0.0
        self.http = HttpStatusWatch()
        """What the HTTP server answered (its error statuses, a forgotten session)."""
        self.ping_failure: str | None = None
        self.fell_back_to_sse = False
        """The config named no transport and the server turned out to speak only the older SSE one."""
        self._tools: list[ToolSpec] | None = None
        self.mcp_tools: dict[str, mcp.Tool] = {}
        """The tools of the last listing as the server sent them, by name (every field kept)."""
        self._tools_generation = 0
        self._tools_fresh_until: float | None = None
        """On 2026-07-28, when the tool listing's cache hint (`ttlMs`) runs out (monotonic seconds); None:
        the listing is kept until the server says the list changed."""
        self.listings = Listings()
        """Resources and prompts listed in this session, and where resource updates go."""
        self.resource_listens: ResourceListens | None = None
        """The streams of resource updates (on the 2026-07-28 revision, which has no resources/subscribe)."""
        # One scope for the whole life: a timeout scope around only the handshake would be exited
        # before the transport's task groups entered inside it, which anyio forbids.
        self._scope = anyio.CancelScope()

    @property
    def usable(self) -> bool:
        return self.session is not None and not self._stop.is_set()

    @property
    def cached_tools(self) -> list[ToolSpec] | None:
        return self._tools

    @property
    def tools_expired(self) -> bool:
        """The tool listing's cache hint has run out: the next listing asks the server again."""
        return self._tools_fresh_until is not None and time.monotonic() >= self._tools_fresh_until

    def forget_tools(self) -> None:
        """Drop the cached tool list, so the next listing asks the server."""
        self._tools = None
        self._tools_generation += 1

    def stop(self, *, closing: bool = False) -> None:
        """End the session; `closing` means on purpose (not a death to report)."""
        self._closing = self._closing or closing
        self._stop_requested = True
        self._stop.set()
        if not self.ready.is_set():
            # Still starting: nobody will wait for this handshake any more.
            self._scope.cancel()

    async def run(self) -> None:
        """The session's whole life; a stdio server's stderr is drained meanwhile."""
        try:
            async with anyio.create_task_group() as background:
                if self.stderr is not None:
                    background.start_soon(self.stderr.keep_draining)
                await self._run_session()
                background.cancel_scope.cancel()
        finally:
            self._ignored_log.report_suppressed()
            # Only now: `done` lets the owner close the stderr pipe, which the drain must not be reading.
            self.done.set()

    async def _run_session(self) -> None:
        try:
            self._scope.deadline = anyio.current_time() + self.config.connect_timeout
            with self._scope as handshake:
                try:
                    await self._serve(self.config, handshake)
                except OldHttpServerError as refused:
                    if not self.config.sse_fallback or self._had_session:
                        raise
                    # No type in the config: the server may be one of the older SSE transport.
                    logger.info("server %r: %s Trying the older SSE transport.", self.config.name, refused)
                    self.fell_back_to_sse = True
                    await self._serve(self.config.model_copy(update={"transport": "sse"}), handshake)
            if handshake.cancelled_caught and not self._had_session and not self._stop_requested:
                self.error = connect_timed_out(self.config, self.stderr)
        except Exception as exc:  # exception groups from the transports' task groups included
            if not self._had_session:
                self.error = start_failure(self.config, exc, self.stderr)
            else:
                logger.debug("session with server %r ended with an error", self.config.name, exc_info=True)
        finally:
            self.client = self.session = self.resource_listens = None
            self._stop.set()
            if self._had_session and not self._closing:
                self.end_reason = self.ping_failure or end_of_session(self.config, self.stderr)
            elif not self._had_session and self.error is None:
                self.error = ConnectionLostError(
                    f"Connecting to server {self.config.name!r} was interrupted before it completed.",
                    server=self.config.name,
                )
            self.ready.set()

    async def _serve(self, config: ServerConfig, handshake: anyio.CancelScope) -> None:
        """Reach the server `config` names, make the session, and keep it until told to stop."""
        established = False

        def ended() -> None:
            # A failed attempt (before an SSE fallback) closing its stream must not end the next one.
            if established:
                self._stop.set()

        self.http = HttpStatusWatch()
        # The HTTP opener reads it when entered (the transport interface passes only the config).
        token = CURRENT_WATCH.set(self.http)
        try:
            auth = await transport_auth(config, self._features, self._scope)
            # `auto` probes `server/discover` (the stateless revision) and falls back to `initialize`,
            # unless this server did not answer the probe before in this process.
            async with (
                ProbingClient(
                    self._watched_transport(config, auth, ended),
                    mode=connect_mode(config),
                    # An HTTP server answers every request, if only with an error status, so it is
                    # never taken for one that ignores the probe: only a stdio server can be silent.
                    discover_timeout=config.discover_timeout
                    if config.transport == "stdio"
                    else config.connect_timeout,
                    # Honours 2026-07-28 cache hints for resource and prompt listings and reads (tool
                    # listings are kept here, until the server says they changed).
                    cache=CacheConfig(),
                    message_handler=self._on_message,
                    client_info=CLIENT_INFO,
                    extensions=[TasksExtension()],  # a long call may come back as a task to follow
                    log_level=self._log_level,  # no effect on 2025-11-25 (logging/setLevel there)
                    **self._callbacks,
                ) as client,
                anyio.create_task_group() as followers,
            ):
                remember_revision(config, client.session)
                # Listening before `ready`: a change made by the first call is not missed. A server
                # that never acknowledges the stream is used without it rather than not at all.
                listening = anyio.Event()
                followers.start_soon(follow_tool_changes, client, config.name, listening, self._stream_lost)
                with anyio.move_on_after(LISTEN_ACK_WAIT):
                    await listening.wait()
                stateless = speaks_stateless_revision(client.session.protocol_version)
                if stateless:  # no session to keep, log levels ride on each request
                    self.resource_listens = ResourceListens(client, followers, config.name)
                    await self._listen_again(self.resource_listens)
                else:
                    await self._set_log_level(client.session)
                    await self.listings.subscribe_again(client.session, config.name)
                handshake.deadline = math.inf
                established = True
                self.client, self.session, self._had_session = client, client.session, True
                self.ready.set()
                if config.transport != "stdio" and not stateless:
                    # A dead stdio server is seen as the end of its stdout; an HTTP one needs asking.
                    followers.start_soon(self._keep_alive, client.session)
                await self._stop.wait()
                followers.cancel_scope.cancel()
                self.client = self.session = self.resource_listens = None
        except BaseException:
            if not established:
                forget_revision(config)  # the server may have changed: the next connect probes again
            raise
        finally:
            CURRENT_WATCH.reset(token)

    async def _listen_again(self, listens: ResourceListens) -> None:
        """Renew an earlier session's resource subscriptions in this new one, before anyone uses it."""
        for uri in self.listings.subscribed():
            try:
                await listens.open(uri)
            except ServerError as exc:
                logger.warning("server %r: %s", self.config.name, exc)

    @asynccontextmanager
    async def _watched_transport(
        self, config: ServerConfig, auth: httpx2.Auth | None, on_end: Callable[[], None]
    ) -> AsyncIterator[TransportStreams]:
        # Only an HTTP session is pinged when idle; a stdio one need not note when it last heard anything.
        heard = None if config.transport == "stdio" else self._heard
        async with open_transport(config, self.stderr, auth) as (read, write):
            yield _WatchedReadStream(read, server=config.name, on_end=on_end, on_message=heard), write

    def _stream_lost(self, why: str) -> None:
        """The tool-change stream of a stateless session ended: over HTTP, end the session (as a failed
        ping does), so the next use reconnects and listens again. A stdio server's exit is seen anyway."""
        if self.config.transport == "stdio" or self._stop.is_set():
            return
        self.ping_failure = f"it went away: {why}"
        self._stop.set()

    def _heard(self) -> None:
        self._last_heard = anyio.current_time()

    async def _keep_alive(self, session: ClientSession) -> None:
        """Ping an HTTP session that has been silent for `ping_interval`; end it when that fails.

        An HTTP server that went away while idle is otherwise found only by the next call. Ended
        here, the next use reconnects, as after a stdio server's exit.
        """
        interval = self.config.ping_interval
        self._heard()
        while True:
            await anyio.sleep_until(self._last_heard + interval)
            if anyio.current_time() < self._last_heard + interval:
                continue  # something arrived meanwhile: not idle
            try:
                # As patient as a handshake: a slow answer is not a dead server.
                with anyio.fail_after(self.config.connect_timeout):
                    await session.send_ping()
            except (MCPError, TimeoutError) as exc:
                why = exc.error.message if isinstance(exc, MCPError) else "no answer in time"
                self.ping_failure = f"it stopped answering pings ({why})"
                self._stop.set()
                return
            self._heard()

    async def _set_log_level(self, session: ClientSession) -> None:
        level = self.config.log_level
        capabilities = session.server_capabilities
        if level is None or capabilities is None or capabilities.logging is None:
            return
        # `send_request` rather than `set_logging_level`: that one warns (the 2026 revision drops
        # logging), which would print on every connect.
        request = mcp.SetLevelRequest(params=mcp.SetLevelRequestParams(level=level))
        try:
            await session.send_request(request, mcp.EmptyResult)
        except MCPError as exc:
            logger.warning("server %r refused log level %r: %s", self.config.name, level, exc.error.message)

    async def list_tools(self, session: ClientSession) -> list[ToolSpec]:
        """The server's tools, from the cache while no `tools/list_changed` arrived since the last listing
        and, on 2026-07-28, while its cache hint lasts (`ttlMs`: a missing or 0 hint keeps it for no time)."""
        if self._tools is not None and not self.tools_expired:
            return self._tools
        generation = self._tools_generation
        listed_at = time.monotonic()
        ttl_ms = MAX_TTL_MS if speaks_stateless_revision(session.protocol_version) else None
        specs: list[ToolSpec] = []
        listed: dict[str, mcp.Tool] = {}
        cursor: str | None = None
        while True:
            params = mcp.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            if ttl_ms is not None:
                ttl_ms = min(ttl_ms, page.ttl_ms)
            specs.extend(tool_spec_from_mcp(tool, source=self.config.name) for tool in page.tools)
            listed.update((tool.name, tool) for tool in page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        self.mcp_tools = listed
        # A list_changed that arrived while we were listing makes this listing possibly stale.
        if generation == self._tools_generation:
            self._tools = specs
            self._tools_fresh_until = None if ttl_ms is None else listed_at + ttl_ms / 1000
        return specs

    def close_stderr(self) -> None:
        if self.stderr is not None:
            self.stderr.close()

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, mcp.ToolListChangedNotification):
            self.forget_tools()
            self._on_tools_changed()
        elif self.listings.notice(message):
            pass
        elif isinstance(message, mcp.ElicitCompleteNotification):
            if self._on_elicitation_complete is not None:
                self._on_elicitation_complete(self.config.name, message.params.elicitation_id)
        elif isinstance(message, Exception):
            # The SDK hands over lines it could not parse instead of failing the session.
            self.ignored_messages += 1
            self._ignored_log.log(
                "server %r sent non-JSON-RPC output, ignored: %s", self.config.name, message
            )


class _WatchedReadStream:
    """The transport's read stream, reporting when the session stops reading it (EOF or close).

    That is how a dead server is noticed without waiting for the next call to fail. A reply the SDK
    could not parse becomes an error for the request it answers (see `_invalid_reply`).
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        *,
        server: str,
        on_end: Callable[[], None],
        on_message: Callable[[], None] | None = None,
    ) -> None:
        self._inner = inner
        self._server = server
        self._on_end = on_end
        self._on_message = on_message

    def _checked(self, item: SessionMessage | Exception) -> SessionMessage | Exception:
        if self._on_message is not None:
            self._on_message()
        if isinstance(item, Exception):
            replacement = invalid_reply_error(item)
            if replacement is not None:
                logger.warning("server %r sent an invalid reply: %s", self._server, item)
                return replacement
        elif (relabelled := relabelled_sdk_parse_error(item)) is not None:
            return relabelled
        return item

    @property
    def last_context(self) -> object:
        # Streamable HTTP carries the sender's contextvars here; the dispatcher reads it by name.
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        return self._checked(await self._inner.receive())

    async def aclose(self) -> None:
        self._on_end()
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return self._checked(await self._inner.__anext__())

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()
