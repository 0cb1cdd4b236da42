"""Streamable HTTP: the current MCP transport for remote servers (one endpoint, POST + SSE)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
from mcp import MCPError
from mcp.client.streamable_http import streamable_http_client

from toolbridge._exception_groups import leaf_errors
from toolbridge._http_client import async_http_client
from toolbridge.config.model import ServerConfig
from toolbridge.errors import ServerStartError
from toolbridge.mcp._stderr import StderrLog
from toolbridge.mcp._transports._http_status import CURRENT_WATCH, HttpStatusWatch
from toolbridge.mcp._transports._streams import TransportStreams

__all__ = ["HTTP_READ_TIMEOUT", "open_streamable_http", "require_url"]

HTTP_READ_TIMEOUT = 300.0
"""Seconds an open response stream may stay silent; per-call timeouts are enforced by the session."""


@asynccontextmanager
async def open_streamable_http(
    config: ServerConfig, stderr: StderrLog | None, auth: httpx2.Auth | None = None
) -> AsyncIterator[TransportStreams]:
    url = require_url(config)
    timeout = httpx2.Timeout(config.connect_timeout, read=HTTP_READ_TIMEOUT)
    watch = CURRENT_WATCH.get() or HttpStatusWatch()
    hooks = {"response": [watch.on_response]}
    named: ServerStartError | None = None
    async with (
        async_http_client(headers=config.headers, timeout=timeout, auth=auth, event_hooks=hooks) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        try:
            yield streams
        except Exception as exc:
            # The SDK reports an HTTP error status as a JSON-RPC error: say what the server answered.
            # (Other failures, an OAuth sign-in's among them, say it themselves.)
            named = watch.failure(config) if _json_rpc_stand_in(exc) else None
            if named is None:
                raise
            named.__cause__ = exc
    if named is not None:
        raise named


def _json_rpc_stand_in(exc: BaseException) -> bool:
    return any(isinstance(leaf, MCPError) for leaf in leaf_errors(exc))


def require_url(config: ServerConfig) -> str:
    if not config.url:
        raise ServerStartError(
            f"Server {config.name!r} uses the {config.transport} transport but has no 'url'. "
            "Set 'url' to the server's endpoint, e.g. http://127.0.0.1:8000/mcp.",
            server=config.name,
        )
    return config.url
