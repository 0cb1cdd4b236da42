"""`ServerPool`: every configured server's connection, and the task group their sessions live in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc

from toolbridge.config.model import ServerConfig
from toolbridge.errors import ServerError, UsageError
from toolbridge.mcp._listings import ListChangeHandler
from toolbridge.mcp._task_group import exit_task_group
from toolbridge.mcp.client_features import NO_FEATURES, ClientFeatures
from toolbridge.mcp.connection import ServerConnection
from toolbridge.mcp.progress import ProgressHandler
from toolbridge.types import ToolResult, ToolSpec

__all__ = ["ServerPool"]


class ServerPool:
    """The connections to a config's MCP servers, started on first use and all shut down on exit.

    ```python
    async with ServerPool(config.servers) as pool:
        await pool.connect_all()  # optional: servers also connect on first use
        result = await pool.call_tool("files", "read", {"path": "a.txt"}, call_id="call_1")
    ```
    Leaving the block (normally, by an error, or by cancellation such as Ctrl-C) closes every
    session and stops every server process.
    """

    def __init__(
        self,
        configs: Mapping[str, ServerConfig],
        *,
        on_tools_changed: Callable[[str], None] | None = None,
        on_list_changed: ListChangeHandler | None = None,
        features: ClientFeatures = NO_FEATURES,
        shared_with: ServerPool | None = None,
    ) -> None:
        """`on_list_changed(server, kind)`: a server said its tools, resources or prompts changed.
        `shared_with`: a pool whose connections this one uses for every server configured
        `"shared": true` (the default); this pool then opens, and closes, only the others' sessions."""
        # The mapping key is the server's name everywhere, even if the config says otherwise.
        self._configs = {
            name: config if config.name == name else config.model_copy(update={"name": name})
            for name, config in configs.items()
        }
        self._on_tools_changed = on_tools_changed
        self._on_list_changed = on_list_changed
        self.features = features
        """What every server gets from its client here (sampling, elicitation, roots, logs)."""
        self._shared_with = shared_with
        self._connections: dict[str, ServerConnection] = {}
        self._task_group: anyio.abc.TaskGroup | None = None

    @property
    def names(self) -> list[str]:
        """Every configured server, enabled or not, in config order."""
        return list(self._configs)

    @property
    def enabled_names(self) -> list[str]:
        return [name for name, config in self._configs.items() if config.enabled]

    def config(self, name: str) -> ServerConfig:
        self._check_known(name)
        return self._configs[name]

    def connection(self, name: str) -> ServerConnection:
        self._check_known(name)
        if self._task_group is None:
            raise UsageError(
                "ServerPool used outside 'async with': open it with `async with ServerPool(...) as pool:`"
            )
        if name not in self._connections and self._shared_with is not None:
            return self._shared_with.connection(name)
        return self._connections[name]

    async def __aenter__(self) -> Self:
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        self._connections = {
            name: ServerConnection(
                config,
                task_group=task_group,
                on_tools_changed=self._on_tools_changed,
                on_list_changed=self._on_list_changed,
                features=self.features,
            )
            for name, config in self._configs.items()
            if self._shared_with is None or not config.shared
        }
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        assert self._task_group is not None
        task_group, suppress = self._task_group, None
        try:
            # Close concurrently: each stdio server gets its own grace period to exit.
            async with anyio.create_task_group() as closing:
                for connection in self._connections.values():
                    closing.start_soon(connection.close)
        finally:
            # Under cancellation the closes above are cut short; the sessions' tasks are then
            # cancelled here, and the SDK's shielded shutdown still stops their processes.
            self._task_group = None
            suppress = await exit_task_group(task_group, exc_type, exc, tb)
        return suppress

    async def connect_all(self) -> dict[str, ServerError | None]:
        """Connect every enabled server at once. Maps each to its error, or None if it connected."""
        outcomes: dict[str, ServerError | None] = {}

        async def connect(name: str) -> None:
            try:
                await self.connection(name).connect()
                outcomes[name] = None
            except ServerError as exc:
                outcomes[name] = exc

        async with anyio.create_task_group() as group:
            for name in self.enabled_names:
                group.start_soon(connect, name)
        return {name: outcomes[name] for name in self.enabled_names}

    async def notify_roots_changed(self, servers: Iterable[str] | None = None) -> None:
        """Send `notifications/roots/list_changed` to `servers` (None: every one) that are connected."""
        for name in self.names if servers is None else servers:
            await self.connection(name).notify_roots_changed()

    def tools_expired(self, server: str) -> bool:
        """The server's tool listing outlived its cache hint (2026-07-28 `ttlMs`)."""
        connection = self._connections.get(server)
        if connection is None and self._shared_with is not None:
            return self._shared_with.tools_expired(server)
        return connection is not None and connection.tools_expired

    async def list_tools(self, server: str, *, refresh: bool = False) -> list[ToolSpec]:
        return await self.connection(server).list_tools(refresh=refresh)

    async def call_tool(
        self,
        server: str,
        name: str,
        arguments: dict[str, Any],
        *,
        call_id: str,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ToolResult:
        connection = self.connection(server)
        return await connection.call_tool(
            name, arguments, call_id=call_id, timeout=timeout, on_progress=on_progress
        )

    def _check_known(self, name: str) -> None:
        if name not in self._configs:
            known = ", ".join(self._configs) or "none"
            raise ServerError(
                f"No MCP server named {name!r} is configured (configured: {known}). "
                "Check the name, or add it under 'mcpServers' in the config.",
                server=name,
            )
