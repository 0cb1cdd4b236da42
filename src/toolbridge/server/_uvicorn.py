"""Running apps with uvicorn: the server's runner and a background server for tests.

`run_server` serves the app and stops gracefully: on SIGTERM or Ctrl-C it stops accepting connections,
ends the pages' event streams (an open page must not hold it up), gives requests and runs in progress
the grace period to finish, then interrupts the rest and exits (0 for SIGTERM, as orchestrators expect
of a clean stop; 130 for Ctrl-C, as shells do).

`BackgroundServer` serves an ASGI app on 127.0.0.1 in a thread of its own, for tests (the scripted
model servers of `toolbridge.testing`); it needs only uvicorn and Starlette, which come with the MCP SDK.
httptools (the `serve` and `gateway` extras) is imported by `bounded_http_protocol()` alone.

This is the one module that reaches into uvicorn beyond its documented API (its httptools protocol, the
server's captured signals, the steps of `Server.serve` and its connection state), so uvicorn has an upper
version bound in pyproject.toml; tests/test_dependency_contracts.py checks what is relied on here before
a new uvicorn is allowed."""

from __future__ import annotations

import asyncio
import errno
import functools
import gc
import logging
import math
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

from toolbridge.errors import ToolbridgeError
from toolbridge.server._redact import install_token_redaction
from toolbridge.telemetry import logging_config

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["MAX_HEAD_BYTES", "BackgroundServer", "bounded_http_protocol", "listen", "run_server"]

logger = logging.getLogger("toolbridge.server")

KEEP_ALIVE_SECONDS = 75
"""How long an idle client connection is kept open. Longer than clients keep theirs (httpx and the openai
SDK: 5 s; load balancers: 60 s), so the client always closes first: at uvicorn's default of 5 s both
ends close at once, and a request sent on the closing connection fails with a read error."""

YOUNG_COLLECTION_THRESHOLD = 10_000
"""Objects made (less those freed) between the collector's young-generation passes while serving."""


MAX_HEAD_BYTES = 64 * 1024
"""The most a request's line and headers may take together, as in common servers (nginx, Apache: 8 KiB
a line; Node: 16 KiB; Go: 1 MiB). httptools has no limit of its own: a header line that never ends was
kept whole in memory, however long."""

_REQUEST_HEADERS_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
)


@functools.cache
def bounded_http_protocol() -> type[HttpToolsProtocol]:
    """The protocol `run_server` serves with, `BoundedHttpToolsProtocol` below; made on first use, as
    httptools comes with the `serve` and `gateway` extras only (`BackgroundServer` runs on h11)."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol with the request head bounded: a head over `MAX_HEAD_BYTES` is
        answered 431 and the connection closed (the connection is just closed when a reply to an earlier
        request on it is under way, to not cut into that reply).

        The parser only says where a head ends by calling back, not at which byte, so the head is counted
        by what is fed to the parser while it reads one, at most the room left at a time. Bytes of a new head
        fed in the same piece as the end of the previous request go uncounted: a head is held to twice the
        limit at worst."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._reading_head = True
            self._head_bytes = 0
            self._requests_parsed = 0
            """Heads and bodies ended so far: a change while a piece is fed means a head's end was in it."""

        def data_received(self, data: bytes) -> None:
            while data:
                room = MAX_HEAD_BYTES - self._head_bytes if self._reading_head else MAX_HEAD_BYTES
                if room <= 0:
                    self._refuse_head()
                    return
                piece, data = data[:room], data[room:]
                parsed_before = self._requests_parsed
                super().data_received(piece)
                if (
                    self.parser is None
                    or self.transport.is_closing()
                    or self.transport.get_protocol() is not self
                ):
                    return  # refused as invalid, lost, or handed to another protocol (an upgrade)
                if self._reading_head and self._requests_parsed == parsed_before:
                    self._head_bytes += len(piece)

        def on_headers_complete(self) -> None:
            self._reading_head = False
            self._requests_parsed += 1
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            super().on_message_complete()
            self._reading_head = True
            self._head_bytes = 0
            self._requests_parsed += 1

        def _refuse_head(self) -> None:
            self.logger.warning("refused a request whose line and headers exceed %d bytes", MAX_HEAD_BYTES)
            if self.cycle is None or self.cycle.response_complete:
                message = (
                    f"the request line and headers take more than {MAX_HEAD_BYTES:,} bytes; send shorter "
                    "headers (large values belong in the body)"
                ).encode()
                self.transport.write(_REQUEST_HEADERS_TOO_LARGE % (len(message), message))
            self.transport.close()

    return BoundedHttpToolsProtocol


class _GracefulServer(uvicorn.Server):
    """uvicorn that ends the page's event streams as it starts to stop (an open page would otherwise hold
    the stop up for the whole grace period, then be cut off with a traceback) and starts the grace period
    the app's lifespan gives its runs."""

    def __init__(self, config: uvicorn.Config, app: Starlette, grace: float) -> None:
        super().__init__(config)
        self._app = app
        self._grace = grace

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        # A streamed reply makes thousands of short-lived objects (chunks, events, generator frames):
        # at Python's default of 700, a young collection ran every few chunks. At this many the same
        # garbage goes in fewer passes: ~3% less CPU per pass-through request (bench/serve.py).
        gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])
        # Everything made while starting (modules, the app, config, schemas) lives as long as the
        # process: out of the collector's sight, so its full collections no longer walk it again and
        # again while requests are served.
        gc.freeze()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        logger.info("stopping: no new connections; runs in progress get %g s to finish", self._grace)
        self._app.state.shutdown_deadline = time.monotonic() + self._grace
        self._app.state.shutting_down = True
        state = getattr(self._app.state, "toolbridge", None)
        if state is not None:
            state.chats.live.close_streams()
        await super().shutdown(sockets=sockets)
        # A clean stop on SIGTERM exits 0 instead of dying of the signal uvicorn would raise again.
        self._captured_signals = [sig for sig in self._captured_signals if sig != signal.SIGTERM]


def listen(host: str, port: int, *, command: str = "toolbridge serve") -> socket.socket:
    """A socket listening on host:port, so a busy port is reported before anything says "serving";
    `command` is what the advice names."""
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ToolbridgeError(
            f"cannot listen on {host!r}: {exc.strerror}. Pass an address such as 127.0.0.1."
        ) from exc
    sock = socket.socket(family, kind, protocol)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: restart at once
    try:
        sock.bind(address)
        sock.listen()
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ToolbridgeError(
                f"port {port} on {host} is already in use (another `{command}`?). Stop what listens "
                f"there, or pick another port: {command} --port {port + 1}"
            ) from exc
        raise ToolbridgeError(f"cannot listen on {host}:{port}: {exc.strerror}.") from exc
    return sock


def run_server(
    app: Starlette,
    sock: socket.socket,
    *,
    log_level: str = "warning",
    token: str | None = None,
    shutdown_grace: float = 30.0,
    log_format: str = "text",
) -> None:
    """Serve `app` on a socket from `listen()` until interrupted (Ctrl-C or SIGTERM), then stop within
    `shutdown_grace` seconds; `token` (and any `token=` parameter) is kept out of every log line;
    `log_format` `json` writes every log line as a JSON object."""
    config = uvicorn.Config(
        app,
        http=bounded_http_protocol(),
        log_level=log_level,
        timeout_graceful_shutdown=math.ceil(shutdown_grace),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        log_config=logging_config("json", log_level) if log_format == "json" else LOGGING_CONFIG,
    )
    install_token_redaction(token)  # after uvicorn.Config, which sets up the handlers it filters
    _GracefulServer(config, app, shutdown_grace).run(sockets=[sock])


# -- a server in a thread of its own, for tests ------------------------------------------------------

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0


class _ThreadedServer(uvicorn.Server):
    """uvicorn with an exact readiness signal and a stop that does not wait for the next 0.1 s tick."""

    def __init__(self, config: uvicorn.Config, before_shutdown: Callable[[], None]) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._before_shutdown = before_shutdown

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        self._stop_requested = asyncio.Event()
        await super().startup(sockets=sockets)
        self.ready.set()

    async def main_loop(self) -> None:
        assert self._stop_requested is not None
        await self._stop_requested.wait()

    def request_stop(self) -> None:
        """Thread-safe."""
        if self.loop is not None and self._stop_requested is not None:
            self.loop.call_soon_threadsafe(self._stop_requested.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn's own shutdown sleeps 0.1 s and polls; ending the app's replies and awaiting the
        # request tasks directly makes closing a test's server nearly free.
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        self._before_shutdown()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        if self.server_state.tasks:
            await asyncio.wait(set(self.server_state.tasks), timeout=_STOP_TIMEOUT)


class BackgroundServer:
    """An ASGI app served on 127.0.0.1 by uvicorn on an event loop in its own thread, so a test's client
    (sync or async, on any loop) talks to it over a real socket and neither can block the other.
    `start()` returns once the server accepts requests; `stop()` returns once it has ended, after
    `before_shutdown` (run on the server's loop) has ended what the app still streams."""

    def __init__(self, app: ASGIApp, *, before_shutdown: Callable[[], None] = lambda: None) -> None:
        config = uvicorn.Config(
            app,
            http="h11",
            ws="none",
            lifespan="off",
            log_config=None,  # leave the test run's logging configuration alone
            access_log=False,
            timeout_keep_alive=KEEP_ALIVE_SECONDS,  # as a real model server: clients close first
        )
        self._server = _ThreadedServer(config, before_shutdown)
        self._socket = socket.create_server(("127.0.0.1", 0))
        # Accepted connections inherit this. Without it every request on a kept-alive connection waits
        # ~40 ms for a delayed ACK (Nagle), which made each model turn 20x slower than it needs to be.
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.port: int = self._socket.getsockname()[1]
        self._thread = threading.Thread(target=self._run, name=f"background-server:{self.port}", daemon=True)
        self._failure: BaseException | None = None

    def start(self) -> None:
        self._thread.start()
        if not self._server.ready.wait(_START_TIMEOUT) or self._failure is not None:
            raise RuntimeError(f"the server on 127.0.0.1:{self.port} did not start") from self._failure

    def call_on_loop(self, callback: Callable[[], None]) -> None:
        """Run `callback` on the server's event loop thread (e.g. to cancel a reply)."""
        if self._server.loop is not None:
            self._server.loop.call_soon_threadsafe(callback)

    def stop(self) -> None:
        if not self._thread.is_alive():
            self._socket.close()
            return
        self._server.request_stop()
        self._thread.join(_STOP_TIMEOUT)
        if self._thread.is_alive():
            raise RuntimeError(f"the server on 127.0.0.1:{self.port} did not stop")

    def _run(self) -> None:
        try:
            asyncio.run(self._server.serve(sockets=[self._socket]))
        except BaseException as failure:  # uvicorn reports a failed startup with SystemExit
            self._failure = failure
        finally:
            self._server.ready.set()  # never leave start() waiting on a dead thread
