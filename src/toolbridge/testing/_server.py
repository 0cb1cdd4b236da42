"""Run an ASGI app with uvicorn on 127.0.0.1 in a background thread, usable from sync and async tests.

The server lives on its own event loop, so a test's client (sync or async, on any loop) talks to it
over a real socket and neither can block the other.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable

import uvicorn
from starlette.types import ASGIApp

from toolbridge.server._uvicorn import KEEP_ALIVE_SECONDS

__all__ = ["BackgroundServer"]

_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 5.0


class _ThreadedUvicorn(uvicorn.Server):
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
        # uvicorn's own shutdown sleeps 0.1 s and polls; ending our replies and awaiting the
        # request tasks directly makes closing a scripted model nearly free.
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
    """`start()` returns once the server accepts requests; `stop()` returns once it has ended."""

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
        self._server = _ThreadedUvicorn(config, before_shutdown)
        self._socket = socket.create_server(("127.0.0.1", 0))
        # Accepted connections inherit this. Without it every request on a kept-alive connection waits
        # ~40 ms for a delayed ACK (Nagle), which made each model turn 20x slower than it needs to be.
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.port: int = self._socket.getsockname()[1]
        self._thread = threading.Thread(target=self._run, name=f"scripted-model:{self.port}", daemon=True)
        self._failure: BaseException | None = None

    def start(self) -> None:
        self._thread.start()
        if not self._server.ready.wait(_START_TIMEOUT) or self._failure is not None:
            raise RuntimeError(f"the scripted model's server on port {self.port} did not start") from (
                self._failure
            )

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
            raise RuntimeError(f"the scripted model's server on port {self.port} did not stop")

    def _run(self) -> None:
        try:
            asyncio.run(self._server.serve(sockets=[self._socket]))
        except BaseException as failure:  # uvicorn reports a failed startup with SystemExit
            self._failure = failure
        finally:
            self._server.ready.set()  # never leave start() waiting on a dead thread
