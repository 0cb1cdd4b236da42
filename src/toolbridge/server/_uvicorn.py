"""Running the app with uvicorn, stopping gracefully: on SIGTERM or Ctrl-C it stops accepting
connections, ends the pages' event streams (an open page must not hold it up), gives requests and runs
in progress the grace period to finish, then interrupts the rest and exits (0 for SIGTERM, as
orchestrators expect of a clean stop; 130 for Ctrl-C, as shells do).

This is the one module that reaches into uvicorn beyond its documented API (its httptools protocol, the
server's captured signals), so uvicorn has an upper version bound in pyproject.toml;
tests/test_dependency_contracts.py checks what is relied on here before a new uvicorn is allowed."""

from __future__ import annotations

import errno
import gc
import logging
import math
import signal
import socket
import time
from typing import Any

import uvicorn
from starlette.applications import Starlette
from uvicorn.config import LOGGING_CONFIG
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolbridge.errors import ToolbridgeError
from toolbridge.server._redact import install_token_redaction
from toolbridge.telemetry import logging_config

__all__ = ["MAX_HEAD_BYTES", "BoundedHttpToolsProtocol", "listen", "run_server"]

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
            state.chats.close_streams()
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
        http=BoundedHttpToolsProtocol,
        log_level=log_level,
        timeout_graceful_shutdown=math.ceil(shutdown_grace),
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        log_config=logging_config("json", log_level) if log_format == "json" else LOGGING_CONFIG,
    )
    install_token_redaction(token)  # after uvicorn.Config, which sets up the handlers it filters
    _GracefulServer(config, app, shutdown_grace).run(sockets=[sock])
