"""The sockets under a model's HTTP client: asyncio's own, read by a small protocol of ours.

httpcore's default backend goes through anyio, which per read of a streamed reply enters a cancel scope
for the timeout, pauses and resumes the socket's reading (two `epoll_ctl` calls under uvloop), and per
request checks every idle pooled connection with a `poll()` of its socket: about 1 ms of the 6.5 ms of
CPU a pass-through request cost the server (50 streams, paced chunks). Here the protocol keeps reading into a buffer (paused
only when a reader falls far behind), a read waits on one future with one timer for its timeout, and an
idle connection the server closed is known from the end of stream the protocol already saw.

On any other event loop (trio) the backend hands everything to httpcore's own.
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import Iterable
from typing import Any, cast

import httpcore2
import httpx2

__all__ = ["AsyncioBackend", "with_asyncio_sockets"]

_PAUSE_AT = 1 << 20
"""Bytes received and not yet read past which the socket stops being read until the reader catches up."""


class _Receiver(asyncio.Protocol):
    """What arrives on one connection, kept until read; and whether the socket may be written to."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.received: deque[bytes] = deque()
        self.buffered = 0
        self.ended = False
        """The server closed its side (or the connection was lost)."""
        self.error: Exception | None = None
        self.reader: asyncio.Future[bool] | None = None
        self.writer: asyncio.Future[bool] | None = None
        """Waits while the transport's write buffer is full."""
        self._writing_paused = False
        self._reading_paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are no subclass of asyncio's

    def data_received(self, data: bytes) -> None:
        self.received.append(data)
        self.buffered += len(data)
        if self.buffered > _PAUSE_AT and not self._reading_paused and self.transport is not None:
            self._reading_paused = True
            self.transport.pause_reading()
        _wake(self.reader, True)

    def eof_received(self) -> bool:
        self.ended = True
        _wake(self.reader, True)
        return False  # close the transport: an HTTP/1.1 client has nothing to say after the server left

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        _wake(self.reader, True)
        _wake(self.writer, True)

    def pause_writing(self) -> None:
        self._writing_paused = True

    def resume_writing(self) -> None:
        self._writing_paused = False
        _wake(self.writer, True)

    @property
    def writing_paused(self) -> bool:
        return self._writing_paused

    def take(self, max_bytes: int) -> bytes:
        data = self.received.popleft()
        if len(data) > max_bytes:
            data, rest = data[:max_bytes], data[max_bytes:]
            self.received.appendleft(rest)
        self.buffered -= len(data)
        if self._reading_paused and self.buffered <= _PAUSE_AT // 2 and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()
        return data


def _wake(waiter: asyncio.Future[bool] | None, value: bool) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(value)


async def _wait(waiter: asyncio.Future[bool], timeout: float | None) -> bool:
    """Whether `waiter` was woken (True) before `timeout` seconds passed (False)."""
    if timeout is None:
        return await waiter
    timer = asyncio.get_running_loop().call_later(timeout, _wake, waiter, False)
    try:
        return await waiter
    finally:
        timer.cancel()


class AsyncioStream(httpcore2.AsyncNetworkStream):
    """One connection, read through `_Receiver`."""

    def __init__(self, transport: asyncio.Transport, receiver: _Receiver) -> None:
        self._transport = transport
        self._receiver = receiver

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        receiver = self._receiver
        if not receiver.received and not receiver.ended:
            receiver.reader = asyncio.get_running_loop().create_future()
            try:
                if not await _wait(receiver.reader, timeout):
                    raise httpcore2.ReadTimeout(f"no data in {timeout} seconds")
            finally:
                receiver.reader = None
        if receiver.received:
            return receiver.take(max_bytes)
        if receiver.error is not None:
            raise httpcore2.ReadError(str(receiver.error)) from receiver.error
        return b""  # the end of the stream, as httpcore expects it

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        receiver = self._receiver
        if self._transport.is_closing():
            raise httpcore2.WriteError(str(receiver.error or "the connection is closed"))
        self._transport.write(buffer)
        if receiver.writing_paused:
            receiver.writer = asyncio.get_running_loop().create_future()
            try:
                if not await _wait(receiver.writer, timeout):
                    raise httpcore2.WriteTimeout(f"could not write for {timeout} seconds")
            finally:
                receiver.writer = None
            if receiver.error is not None:
                raise httpcore2.WriteError(str(receiver.error)) from receiver.error

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._receiver, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError as error:
            self._transport.close()
            raise httpcore2.ConnectTimeout(f"no TLS handshake in {timeout} seconds") from error
        except OSError as error:  # ssl.SSLError among them
            self._transport.close()
            raise httpcore2.ConnectError(str(error)) from error
        if transport is None:  # the connection was closed during the handshake
            raise httpcore2.ConnectError("the server closed the connection during the TLS handshake")
        self._receiver.transport = transport
        return AsyncioStream(transport, self._receiver)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # Idle and readable means the server is closing it. The protocol reads whenever the socket
            # is readable, so its buffer and end-of-stream already say so, without a poll() per socket.
            return bool(self._receiver.received) or self._receiver.ended
        names = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername"}
        if info == "socket" or info in names:
            return self._transport.get_extra_info(names.get(info, info))
        return None


class AsyncioBackend(httpcore2.AsyncNetworkBackend):
    """TCP connections as `AsyncioStream`s on asyncio; httpcore's anyio backend elsewhere, and for what
    needs more than a plain connection (socket options, Unix sockets)."""

    def __init__(self) -> None:
        self._anyio = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = _asyncio_loop()
        if socket_options or loop is None:
            return await self._anyio.connect_tcp(host, port, timeout, local_address, socket_options)
        local = (local_address, 0) if local_address else None
        try:
            async with asyncio.timeout(timeout):
                transport, receiver = await loop.create_connection(_Receiver, host, port, local_addr=local)
        except TimeoutError as error:
            raise httpcore2.ConnectTimeout(f"could not connect in {timeout} seconds") from error
        except OSError as error:
            raise httpcore2.ConnectError(str(error)) from error
        return AsyncioStream(transport, receiver)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        return await self._anyio.connect_unix_socket(path, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        await self._anyio.sleep(seconds)


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop; None on another library's (trio)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def with_asyncio_sockets(client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    """`client`, its direct connections made by `AsyncioBackend`. httpx takes no network backend, so it
    is set on the connection pool its transport built (httpcore's `network_backend`); connections
    through a proxy (`HTTPS_PROXY`, ...) keep httpcore's own."""
    transport = getattr(client, "_transport", None)
    pool = getattr(transport, "_pool", None)
    if isinstance(transport, httpx2.AsyncHTTPTransport) and isinstance(pool, httpcore2.AsyncConnectionPool):
        pool._network_backend = AsyncioBackend()
    return client
