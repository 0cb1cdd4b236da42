"""`LeanHttpTransport`: httpx2's transport for MCP servers over HTTP, on `httptools` instead of httpcore2.

httpx2's own transport (httpcore2's pool and the pure-Python h11) costs more CPU per request than the
rest of toolbridge's side of an MCP call; a gateway over HTTP pays it on every call it passes on.
aiohttp's, which toolbridge uses for models (`toolbridge._http_client`), costs less than httpx2's but
more than this one, since it builds a request and a response of its own around httpx2's (bench/gateway.py,
the gateway's CPU per call: 2.2 ms with httpx2's own, 2.05 ms with aiohttp's, 1.8 ms with this one). This
one writes each request in one piece and parses responses with `httptools` (C, the parser uvicorn
uses) on an asyncio protocol, keeps connections alive per origin and streams response bodies (a server
may answer a POST with an SSE stream that lasts). It is what an MCP client needs of HTTP/1.1 (a
request at a time per connection, bodies in memory), with httpx2's exceptions, so the SDK and toolbridge
handle failures as before; httpx2 keeps doing the rest (auth, redirects, event hooks, decoding,
proxies from the environment, which it routes through its own transports).
"""

from __future__ import annotations

import asyncio
import ssl
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, cast

import httptools
import httpx2

__all__ = ["LeanHttpTransport", "lean_transport"]

_IDLE_PER_ORIGIN = 16
"""Idle connections kept per origin; more are closed when their response ends."""
_PAUSE_AT = 1 << 20
"""Bytes of response body buffered before reading pauses until the reader catches up."""

Origin = tuple[str, str, int]


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection, one request at a time: the event loop and the parser feed it, the
    request waiting on it reads the response's head, then its body."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._reading_paused = False
        self._head_request = False
        self._start_response()

    def _start_response(self) -> None:
        self._parser = httptools.HttpResponseParser(self)
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_done = self.complete = self.keep_alive = self._ends_at_close = False
        self.failure: Exception | None = None
        self._chunks: deque[bytes] = deque()
        self._buffered = 0

    # Called by the event loop.
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not subclasses

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(httpx2.RemoteProtocolError(f"the server sent an invalid HTTP response: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.head_done and self._ends_at_close and self.failure is None:
            self.complete = True  # a body without a length ends where the connection does
        elif not self.complete:
            reason = f": {exc}" if exc else ""
            self._fail(httpx2.RemoteProtocolError(f"the server closed the connection mid-response{reason}"))
        self._wake()

    # Called by the parser.
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.head_done = True
        # Asked now: once the message is complete the parser has reset for the next one.
        self.keep_alive = self._parser.should_keep_alive()
        if self._head_request:  # the parser would wait for the body the headers announce
            self.complete, self.keep_alive = True, False
        names = {name.lower() for name, _ in self.headers}
        self._ends_at_close = b"content-length" not in names and b"transfer-encoding" not in names
        self._wake()

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)
        self._buffered += len(body)
        if self._buffered > _PAUSE_AT and not self._reading_paused and self.transport is not None:
            self._reading_paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        self.complete = True
        self._wake()

    # Used by the request.
    def send(self, message: bytes, *, head: bool = False) -> None:
        """Write a request; `head`: a HEAD request, whose response has no body whatever it says."""
        assert self.transport is not None
        self._start_response()
        self._head_request = head
        self.transport.write(message)

    async def response_head(self, timeout: float | None) -> tuple[int, list[tuple[bytes, bytes]]]:
        while not self.head_done:
            await self._wait(timeout)
        return self._parser.get_status_code(), self.headers

    async def body(self, timeout: float | None) -> AsyncIterator[bytes]:
        while True:
            while self._chunks:
                chunk = self._chunks.popleft()
                self._buffered -= len(chunk)
                if self._reading_paused and self._buffered < _PAUSE_AT // 2 and self.transport is not None:
                    self._reading_paused = False
                    self.transport.resume_reading()
                yield chunk
            if self.complete:
                return
            await self._wait(timeout)

    def reusable(self) -> bool:
        return self.complete and self.keep_alive and not self.closed and not self._chunks

    def close(self) -> None:
        if self.transport is not None and not self.closed:
            self.transport.close()
        self.closed = True

    async def _wait(self, timeout: float | None) -> None:
        if self.failure is not None:
            raise self.failure
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(timeout):
                await self._waiter
        except TimeoutError:
            self._fail(httpx2.ReadTimeout(f"the server sent nothing for {timeout} seconds"))
        finally:
            self._waiter = None
        if self.failure is not None:
            raise self.failure

    def _fail(self, failure: Exception) -> None:
        if self.failure is None:
            self.failure = failure
        self.close()
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class _ResponseBody(httpx2.AsyncByteStream):
    """A response's body as it arrives; closing it hands the connection back for the next request."""

    def __init__(
        self, transport: LeanHttpTransport, origin: Origin, connection: _Connection, timeout: float | None
    ) -> None:
        self._transport = transport
        self._origin = origin
        self._connection = connection
        self._timeout = timeout
        self._released = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._connection.body(self._timeout):
            yield chunk

    async def aclose(self) -> None:
        if not self._released:
            self._released = True
            self._transport._release(self._origin, self._connection)


class LeanHttpTransport(httpx2.AsyncBaseTransport):
    def __init__(self, ssl_context: ssl.SSLContext | None = None, *, max_connections: int = 100) -> None:
        """`ssl_context`: for `https://` (default: httpx2's, with the certificates it trusts);
        `max_connections`: requests in flight at once (as httpx2's default), the others wait their turn."""
        self._ssl_context = ssl_context
        self._idle: dict[Origin, list[_Connection]] = {}
        self._in_flight = asyncio.Semaphore(max_connections)
        self._closed = False

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme not in ("http", "https"):
            raise httpx2.UnsupportedProtocol(f"cannot send a request to {url}: only http:// and https://")
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == "https" else 80))
        timeouts: dict[str, Any] = request.extensions.get("timeout", {})
        message = await _message(request)
        await self._take_turn(timeouts.get("pool"))
        try:
            connection = await self._connection_for(origin, timeouts.get("connect"))
        except BaseException:
            self._in_flight.release()
            raise
        connection.send(message, head=request.method == "HEAD")
        try:
            status, headers = await connection.response_head(timeouts.get("read"))
        except BaseException:  # cancelled or failed mid-request: the connection's state is unknown
            self._release(origin, connection)
            raise
        body = _ResponseBody(self, origin, connection, timeouts.get("read"))
        return httpx2.Response(status, headers=headers, stream=body, extensions={"http_version": b"HTTP/1.1"})

    async def _take_turn(self, timeout: float | None) -> None:
        try:
            async with asyncio.timeout(timeout):
                await self._in_flight.acquire()
        except TimeoutError as exc:
            raise httpx2.PoolTimeout(f"no connection came free within {timeout} seconds") from exc

    async def _connection_for(self, origin: Origin, timeout: float | None) -> _Connection:
        idle = self._idle.get(origin)
        while idle:
            connection = idle.pop()
            if not connection.closed:  # the server may have closed it while it was idle
                return connection
        scheme, host, port = origin
        context = self._tls_context() if scheme == "https" else None
        try:
            async with asyncio.timeout(timeout):
                _, connection = await asyncio.get_running_loop().create_connection(
                    _Connection, host, port, ssl=context
                )
        except TimeoutError as exc:
            raise httpx2.ConnectTimeout(
                f"could not connect to {host}:{port} within {timeout} seconds"
            ) from exc
        except OSError as exc:
            raise httpx2.ConnectError(f"could not connect to {host}:{port}: {exc}") from exc
        return connection

    def _tls_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            # httpx2's, as its own transport would use (certificates from $SSL_CERT_FILE or the system's).
            self._ssl_context = httpx2.create_ssl_context()
            self._ssl_context.set_alpn_protocols(["http/1.1"])
        return self._ssl_context

    def _release(self, origin: Origin, connection: _Connection) -> None:
        """A request is done with `connection`: kept for the next one when its response ended cleanly."""
        self._in_flight.release()
        idle = self._idle.setdefault(origin, [])
        if self._closed or not connection.reusable() or len(idle) >= _IDLE_PER_ORIGIN:
            connection.close()
        else:
            idle.append(connection)

    async def aclose(self) -> None:
        self._closed = True
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()


def lean_transport() -> LeanHttpTransport | None:
    """A `LeanHttpTransport` when running on asyncio (which it is written for); else None, for httpx2's own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # trio
        return None
    return LeanHttpTransport()


async def _message(request: httpx2.Request) -> bytes:
    """The request as it goes on the wire: its head and whole body, one write."""
    body = await request.aread()
    lines = [b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), request.url.raw_path)]
    for name, value in request.headers.raw:
        if name.lower() not in (b"content-length", b"transfer-encoding"):
            lines.append(b"%s: %s\r\n" % (name, value))
    if body or request.method not in ("GET", "HEAD", "DELETE", "OPTIONS"):
        lines.append(b"content-length: %d\r\n" % len(body))
    lines.append(b"\r\n")
    return b"".join(lines) + body
