"""The HTTP client toolbridge builds for models and MCP servers: httpx2's API over aiohttp's connections.

httpx2's own transport (httpcore2, parsing with the pure-Python h11) spends about three times aiohttp's
CPU on a streamed response (aiohttp parses with llhttp, in C); for the pass-through endpoint and the
gateway that was the largest share of a request. The openai and anthropic SDKs offer the same switch
(`DefaultAioHttpClient`, built on httpx-aiohttp); MCP's client takes any httpx2 client. Proxies from
the environment keep working: httpx2 routes to a transport per proxy, each an aiohttp one.

httpx-aiohttp names a refused or dropped connection a timeout. Both toolbridge and the SDKs tell
timeouts apart (a model that is down is not a model that is slow), so the errors are renamed here to
what httpx2's own transport raises.

aiohttp runs on asyncio only: under any other event loop (trio) the client uses httpx2's transport.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx2
from httpx2._config import DEFAULT_LIMITS
from httpx2._types import CertTypes
from httpx_aiohttp.httpx2 import AiohttpTransport

__all__ = ["async_http_client"]


def async_http_client(**options: Any) -> httpx2.AsyncClient:
    """An `httpx2.AsyncClient` (same options) sending over aiohttp when the running loop is asyncio."""
    return (_AiohttpClient if _on_asyncio() else httpx2.AsyncClient)(**options)


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()  # raises under trio, and outside any loop (then httpx2's own is safe)
    except RuntimeError:
        return False
    return True


class _Transport(AiohttpTransport):
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


class _AiohttpClient(httpx2.AsyncClient):
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
