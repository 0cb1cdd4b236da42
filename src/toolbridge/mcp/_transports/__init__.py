"""Transports: each opens the byte streams to one server, as the SDK's client session expects them.

A transport is one async context manager (an `Opener` called with the server's config). A new
transport is a new module here and one line in `_OPENERS`, never an `if` in the connection.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import httpx2

from toolbridge.config.model import ServerConfig, Transport
from toolbridge.mcp._stderr import StderrLog
from toolbridge.mcp._transports._streams import TransportStreams
from toolbridge.mcp._transports.sse import open_sse
from toolbridge.mcp._transports.stdio import open_stdio
from toolbridge.mcp._transports.streamable_http import open_streamable_http

__all__ = ["Opener", "TransportStreams", "open_transport"]

Opener = Callable[
    [ServerConfig, StderrLog | None, httpx2.Auth | None], AbstractAsyncContextManager[TransportStreams]
]

_OPENERS: dict[Transport, Opener] = {
    "stdio": open_stdio,
    "sse": open_sse,
    "streamable-http": open_streamable_http,
}


def open_transport(
    config: ServerConfig, stderr: StderrLog | None, auth: httpx2.Auth | None = None
) -> AbstractAsyncContextManager[TransportStreams]:
    """The streams to `config`'s server; `stderr` receives a child process's stderr, if there is one;
    `auth` signs an HTTP server's requests (OAuth)."""
    return _OPENERS[config.transport](config, stderr, auth)
