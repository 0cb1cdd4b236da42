"""One request other than a tool call (listing, reading, getting a prompt) on a live session, within
the server's timeout, its failures raised as toolbridge's errors naming what was being done."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
from mcp import MCPError
from mcp_types import CONNECTION_CLOSED
from pydantic import ValidationError

from toolbridge.config.model import ServerConfig
from toolbridge.errors import ConnectionLostError, ServerError, ServerTimeoutError
from toolbridge.mcp._invalid_reply import INVALID_REPLY, invalid_reply_message
from toolbridge.mcp._live_session import LiveSession

__all__ = ["request_once"]

T = TypeVar("T")


async def request_once(
    live: LiveSession,
    config: ServerConfig,
    what: str,
    send: Callable[[LiveSession], Awaitable[T]],
    *,
    method: str | None = None,
) -> T:
    """`send(live)`; `what` says what it does ("reading 'file:///a'"), `method` which MCP request it
    sends ("tools/list"), if known. A lost connection raises `ConnectionLostError` (the caller may
    reconnect and send again), anything else a `ServerError`."""
    name = config.name
    if live.session is None:
        raise ConnectionLostError(f"The session with server {name!r} has ended.", server=name)
    try:
        with anyio.fail_after(config.timeout):
            return await send(live)
    except TimeoutError:
        raise ServerTimeoutError(
            f"Server {name!r} did not finish {what} within {config.timeout:g} s. "
            "Check the server, or raise 'timeout' in its config.",
            server=name,
            timeout=config.timeout,
        ) from None
    except MCPError as exc:
        if exc.code == CONNECTION_CLOSED or live.http.session_gone:
            raise ConnectionLostError(
                f"The connection to server {name!r} was lost while {what}.", server=name
            ) from exc
        if exc.error.data == INVALID_REPLY:
            message = invalid_reply_message(
                name, exc.error.message, answering=f"to {method!r}" if method else f"while {what}"
            )
            raise ServerError(message, server=name) from exc
        raise ServerError(
            f"Server {name!r} failed {what}: {exc.error.message} (JSON-RPC error {exc.code}).", server=name
        ) from exc
    except (RuntimeError, ValidationError) as exc:
        raise ServerError(f"Server {name!r} sent a wrong answer while {what}: {exc}", server=name) from exc
