"""The HTTP client toolbridge builds for models and MCP servers: httpx2's API, over aiohttp's connections
when the `fast-http` extra is installed (`toolbridge._aiohttp_client` says why and how), else over
httpx2's own transport (the same behaviour, at about three times the CPU per streamed response).

Either way idle connections are dropped after 4 s, before the common servers drop theirs (uvicorn, and
so the MCP SDK's server, after 5 s): a request sent on a connection the server is just closing is lost
with no way to tell whether it ran.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

import httpx2

from toolbridge._extras import installed

__all__ = ["KEEPALIVE_EXPIRY", "async_http_client"]

KEEPALIVE_EXPIRY = 4.0
"""Seconds an idle connection is kept: below the 5 s after which uvicorn (and Node, hypercorn) close one,
so the client lets it go first."""

_LIMITS = httpx2.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=KEEPALIVE_EXPIRY)
"""httpx2's default pool sizes, with the shorter idle time."""


def async_http_client(**options: Any) -> httpx2.AsyncClient:
    """An `httpx2.AsyncClient` (same options) sending over aiohttp when the running loop is asyncio and
    the `fast-http` extra is installed."""
    options.setdefault("limits", _LIMITS)
    return (_aiohttp_client() if _on_asyncio() else httpx2.AsyncClient)(**options)


@functools.cache
def _aiohttp_client() -> type[httpx2.AsyncClient]:
    """The client over aiohttp with the `fast-http` extra; without it, httpx2's own."""
    if not (installed("aiohttp") and installed("httpx_aiohttp")):
        return httpx2.AsyncClient
    from toolbridge._aiohttp_client import AiohttpClient

    return AiohttpClient


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()  # raises under trio, and outside any loop (then httpx2's own is safe)
    except RuntimeError:
        return False
    return True
