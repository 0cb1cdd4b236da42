"""httpx2's API over aiohttp's connections (the `fast-http` extra; `toolbridge._http_client` chooses).

httpx2's own transport (httpcore2, parsing with the pure-Python h11) spends about three times aiohttp's
CPU on a streamed response (aiohttp parses with llhttp, in C); for the pass-through endpoint and the
gateway that was the largest share of a request. The openai and anthropic SDKs offer the same switch
(`DefaultAioHttpClient`, built on httpx-aiohttp); MCP's client takes any httpx2 client. Proxies from
the environment keep working: httpx2 routes to a transport per proxy, each an aiohttp one.

httpx-aiohttp names a refused or dropped connection a timeout. Both toolbridge and the SDKs tell
timeouts apart (a model that is down is not a model that is slow), so the errors are renamed here to
what httpx2's own transport raises.

A server closes a connection it has kept idle for a while (uvicorn, and so the MCP SDK's server, after
5 s), and a request sent on it just then is lost with no way to tell whether it ran. Two things keep
requests off such connections: idle connections are dropped after 4 s, before the common servers drop
them; and a connection taken from the pool is checked first, so one the server has already closed (its
close waiting on the socket, not yet seen by the event loop) is discarded and the request goes on a new
one. Only a close that crosses the request on the wire is left, and then the request may have reached
the server: that failure is reported, never retried here.

aiohttp runs on asyncio only: under any other event loop (trio) the client uses httpx2's transport.

This is the one module that reaches into httpx2, httpx-aiohttp and aiohttp beyond their documented APIs:
- httpx2: `AsyncClient._init_transport` and `_init_proxy_transport` are overridden (the seam where the
  client makes its transport and one per proxy, with the `verify`, `cert`, `trust_env` and `limits` it
  was given), and their defaults come from `httpx2._config.DEFAULT_LIMITS` and `httpx2._types.CertTypes`.
- httpx-aiohttp: `AiohttpTransport.get_client` is overridden to use our connector, reading the
  transport's `limits` and `ssl_context`; its errors are renamed by their `__cause__` (aiohttp's error).
- aiohttp: `BaseConnector._get`, which `connect()` asks for a pooled connection, is overridden to check
  the connection first.
Each has an upper version bound in pyproject.toml, and tests/test_dependency_contracts.py checks what is
relied on here against the installed versions.
"""

from __future__ import annotations

import select
import ssl
from collections.abc import AsyncIterator

import aiohttp
import httpx2
from aiohttp.client_proto import ResponseHandler
from aiohttp.client_reqrep import ConnectionKey
from aiohttp.connector import Connection
from aiohttp.tracing import Trace
from httpx2._config import DEFAULT_LIMITS
from httpx2._types import CertTypes
from httpx_aiohttp.httpx2 import AiohttpTransport

__all__ = ["AiohttpClient"]


class _Transport(AiohttpTransport):
    def get_client(self) -> aiohttp.ClientSession:
        connector = _Connector(
            limit=self.limits.max_connections or 0,  # 0: no limit, as None is to httpx2
            keepalive_timeout=self.limits.keepalive_expiry,
            ssl=self.ssl_context,
        )
        return aiohttp.ClientSession(connector=connector)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            response = await super().handle_async_request(request)
        except httpx2.TransportError as error:
            raise _as_httpx(error, request) from error.__cause__
        assert isinstance(response.stream, httpx2.AsyncByteStream)
        response.stream = _Body(response.stream, request)
        return response


class _Body(httpx2.AsyncByteStream):
    """A response body whose read errors are renamed like the request's."""

    def __init__(self, stream: httpx2.AsyncByteStream, request: httpx2.Request) -> None:
        self._stream = stream
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._stream:
                yield chunk
        except httpx2.TransportError as error:
            raise _as_httpx(error, self._request) from error.__cause__

    async def aclose(self) -> None:
        await self._stream.aclose()


def _as_httpx(error: httpx2.TransportError, request: httpx2.Request) -> httpx2.TransportError:
    """The error httpx2's own transport raises for what aiohttp reported."""
    cause = error.__cause__
    renamed: type[httpx2.TransportError] | None = None
    if isinstance(cause, aiohttp.ServerTimeoutError):
        renamed = None  # a real timeout: httpx-aiohttp named it right
    elif isinstance(cause, aiohttp.ClientConnectorError):  # refused, unreachable, no such host
        renamed = httpx2.ConnectError
    elif isinstance(cause, aiohttp.ServerDisconnectedError):
        renamed = httpx2.RemoteProtocolError
    elif isinstance(cause, aiohttp.ClientConnectionError):  # reset or broken mid-response
        renamed = httpx2.ReadError
    if renamed is None:
        return error
    return renamed(str(cause) or type(cause).__name__, request=request)


class _Connector(aiohttp.TCPConnector):
    """aiohttp's connector, reusing only idle connections the server has not closed (as httpcore does)."""

    async def _get(self, key: ConnectionKey, traces: list[Trace]) -> Connection | None:
        while (connection := await super()._get(key, traces)) is not None:
            if connection.protocol is None or not _closed_by_server(connection.protocol):
                return connection
            connection.close()  # the request would be lost on it: the pool gives the next, or None
        return None


def _closed_by_server(protocol: ResponseHandler) -> bool:
    """Whether an idle connection has anything to read: the server's close (an idle HTTP/1.1 connection
    gets nothing else), there on the socket before the event loop has run to notice it."""
    sock = protocol.transport.get_extra_info("socket") if protocol.transport is not None else None
    if sock is None:
        return False
    if not hasattr(select, "poll"):  # Windows; select() there takes any socket, with no 1024 limit
        return bool(select.select([sock], [], [], 0)[0])
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(0))


class AiohttpClient(httpx2.AsyncClient):
    """`httpx2.AsyncClient` sending over aiohttp; asyncio only."""

    def _init_transport(
        self,
        verify: ssl.SSLContext | str | bool = True,
        cert: CertTypes | None = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: httpx2.Limits = DEFAULT_LIMITS,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> httpx2.AsyncBaseTransport:
        return transport or _Transport(verify=verify, cert=cert, trust_env=trust_env, limits=limits)

    def _init_proxy_transport(
        self,
        proxy: httpx2.Proxy,
        verify: ssl.SSLContext | str | bool = True,
        cert: CertTypes | None = None,
        trust_env: bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: httpx2.Limits = DEFAULT_LIMITS,
    ) -> httpx2.AsyncBaseTransport:
        return _Transport(verify=verify, cert=cert, trust_env=trust_env, limits=limits, proxy=proxy)
