"""Asking the offered servers for what the gateway serves: every server at once, failures apart; and
which of them the client of a request reaches (`_reach`)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import anyio
import mcp_types as mcp
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp_types import INTERNAL_ERROR

from toolbridge.errors import ServerError
from toolbridge.gateway._calls import ClientCalls
from toolbridge.gateway._passthrough import passed_through, passthrough_for
from toolbridge.gateway._reach import CallerReach
from toolbridge.mcp import ServerContent
from toolbridge.tools import Toolbox

__all__ = ["Upstream", "upstream_error"]

logger = logging.getLogger("toolbridge.gateway")

T = TypeVar("T")

_AnswerableParams = mcp.GetPromptRequestParams | mcp.ReadResourceRequestParams


class Upstream:
    """The servers whose resources and prompts the gateway offers (`servers`; None: every enabled one),
    and those of them the client of a request reaches (`reach`; None: all of them)."""

    def __init__(
        self,
        toolbox: Toolbox,
        servers: Sequence[str] | None = None,
        reach: CallerReach | None = None,
        calls: ClientCalls | None = None,
    ) -> None:
        self._catalog = toolbox.content.only(servers)
        self._reach = reach
        self._calls = calls or ClientCalls()

    async def passed_on(
        self,
        ctx: ServerRequestContext[Any, Any],
        server: str,
        params: _AnswerableParams,
        request: Callable[[], Awaitable[T]],
    ) -> T | mcp.InputRequiredResult:
        """`request()` to `server` as the client of `ctx` made it (see `_passthrough`): its result, or the
        server's `input_required` for a 2026-07-28 client. Meanwhile the server's questions that the
        gateway answers (for a 2025 client) go to that client."""
        passthrough = passthrough_for(ctx, params.input_responses, params.request_state)
        with self._calls.calling(ctx, server=server):
            return await passed_through(passthrough, request)

    @property
    def servers(self) -> list[str]:
        """The offered servers, in config order."""
        return self._catalog.server_names

    async def reachable(self) -> list[str]:
        """The offered servers the client of this request reaches, in config order."""
        servers = self.servers
        return await self._reach.servers(servers) if self._reach is not None else servers

    def content(self, server: str) -> ServerContent:
        return self._catalog.server(server)

    async def gather(self, fetch: Callable[[ServerContent], Awaitable[list[T]]]) -> dict[str, list[T]]:
        """`fetch` from every offered server concurrently; a server that fails is left out (and logged)."""
        found: dict[str, list[T]] = {}

        async def one(server: str) -> None:
            try:
                found[server] = await fetch(self.content(server))
            except ServerError as exc:
                logger.warning("left out of the listing: %s", exc)

        servers = self.servers
        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(one, server)
        return {server: found[server] for server in servers if server in found}


def upstream_error(exc: ServerError) -> MCPError:
    """A failed upstream request as the error the downstream client gets: the upstream's own code when
    it answered with an error (and its `data`, where it says more: the URI not found, the capability
    needed), and toolbridge's message naming the server and what failed."""
    cause = exc.__cause__
    if isinstance(cause, MCPError):
        return MCPError(cause.code, str(exc), cause.error.data)
    return MCPError(INTERNAL_ERROR, str(exc))
