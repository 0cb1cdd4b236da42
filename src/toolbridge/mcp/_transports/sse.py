"""SSE: the older HTTP transport (a GET event stream for replies, POSTs for requests)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
from mcp.client.sse import sse_client

from toolbridge.config.model import ServerConfig
from toolbridge.mcp._stderr import StderrLog
from toolbridge.mcp._transports._streams import TransportStreams
from toolbridge.mcp._transports.streamable_http import HTTP_READ_TIMEOUT, require_url

__all__ = ["open_sse"]


@asynccontextmanager
async def open_sse(
    config: ServerConfig, stderr: StderrLog | None, auth: httpx2.Auth | None = None
) -> AsyncIterator[TransportStreams]:
    async with sse_client(
        require_url(config),
        headers=dict(config.headers) or None,
        auth=auth,
        timeout=config.connect_timeout,
        sse_read_timeout=HTTP_READ_TIMEOUT,
    ) as streams:
        yield streams
