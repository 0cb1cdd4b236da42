"""`Toolbox`: the tools of one configuration, MCP connections and native tools, ready to call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel

from toolbridge.config.model import Config
from toolbridge.mcp import ListChangeHandler, ListKind, ProgressHandler, ServerPool
from toolbridge.mcp.client_features import NO_FEATURES, ClientFeatures
from toolbridge.mcp.server_log import LogEntry
from toolbridge.tools.cache import cache_from_config
from toolbridge.tools.function import FunctionTool
from toolbridge.tools.native import native_tools
from toolbridge.tools.observers import TracedCalls
from toolbridge.tools.pipeline import LIBRARY, CallContext, CallObserver, ToolPipeline
from toolbridge.tools.registry import ToolRegistry
from toolbridge.tools.resource_and_prompt_catalog import ContentCatalog
from toolbridge.types import ToolCall, ToolResult, ToolSpec

__all__ = ["ServerStatus", "Toolbox"]


class ServerStatus(BaseModel):
    """One server as `toolbridge servers` shows it."""

    name: str
    transport: str
    target: str
    """The command line or URL (never headers or env values: they may hold secrets)."""
    enabled: bool
    state: str
    tool_count: int | None
    last_error: str | None
    protocol: str | None = None
    """The MCP revision the server speaks with us (None when it is not connected)."""
    needs_sign_in: bool = False
    """It wants an OAuth sign-in (`toolbridge auth login`, or the web page's Sign in button)."""


class Toolbox:
    """Owns the server connections of a config and the registry over them.

    ```python
    async with Toolbox(load_config()) as toolbox:
        result = await toolbox.call("calculate", {"expression": "15 + 27"})
    ```
    Servers connect on first use and stay connected until the toolbox closes, which shuts every
    session and child process down, also when the surrounding task is cancelled.
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        native: bool = True,
        tools: Iterable[FunctionTool] = (),
        features: ClientFeatures = NO_FEATURES,
    ) -> None:
        """`features`: what the servers get from their client (sampling, elicitation, roots, logs)."""
        self.config = config or Config()
        self._list_listeners: dict[object, ListChangeHandler] = {}
        self._pool = ServerPool(
            self.config.servers,
            on_tools_changed=self._tools_changed,
            on_list_changed=self._list_changed,
            features=features,
        )
        self._native = [*(native_tools() if native else []), *tools]
        self._cache = cache_from_config(self.config)
        self.registry = ToolRegistry(
            self._pool, self._native, cache=self._cache, any_source=self.config.routing.any_source
        )
        self.observers: list[CallObserver] = [TracedCalls()]
        """Told about every call through this toolbox's pipelines: spans and metrics (no-ops until a
        tracer provider or `install_metrics()` is installed); `serve`, `gateway` and the CLI add the
        call log (`toolbridge.store.CallLog`)."""
        self.calls = ToolPipeline(self.registry, self.observers)
        """The one path every call takes (see `toolbridge.tools.pipeline`)."""
        self._session_registries: set[ToolRegistry] = set()
        self.content = ContentCatalog(self._pool)
        """The servers' resources and prompts."""
        self._stack = AsyncExitStack()

    def _tools_changed(self, server: str) -> None:
        self.registry.tools_changed(server)
        for registry in self._session_registries:
            registry.tools_changed(server)

    @property
    def has_unshared_servers(self) -> bool:
        """Whether a server is configured `"shared": false` (see `own_sessions`)."""
        return any(not config.shared for config in self.config.servers.values())

    def pipeline(self, registry: ToolRegistry) -> ToolPipeline:
        """The call pipeline over `registry` (one of `own_sessions`), with this toolbox's observers."""
        return self.calls if registry is self.registry else ToolPipeline(registry, self.observers)

    @asynccontextmanager
    async def own_sessions(self) -> AsyncIterator[ToolRegistry]:
        """A registry over the same tools in which every server configured `"shared": false` gets a
        session of its own, closed on leaving the block; the other servers' sessions are this toolbox's.

        The gateway opens one per client session, for servers that keep state per client.
        """
        pool = ServerPool(
            self.config.servers,
            on_tools_changed=lambda server: registry.tools_changed(server),
            on_list_changed=self._list_changed,
            features=self._pool.features,
            shared_with=self._pool,
        )
        registry = ToolRegistry(
            pool, self._native, cache=self._cache, any_source=self.config.routing.any_source
        )
        async with pool:
            self._session_registries.add(registry)
            try:
                yield registry
            finally:
                self._session_registries.discard(registry)

    def watch_lists(self, listener: ListChangeHandler) -> Callable[[], None]:
        """Have `listener(server, kind)` told whenever a server says its tools, resources or prompts
        changed (after the registry knows). Returns what stops it; `listener` must not block."""
        token = object()
        self._list_listeners[token] = listener

        def stop() -> None:
            self._list_listeners.pop(token, None)

        return stop

    def _list_changed(self, server: str, kind: ListKind) -> None:
        for listener in list(self._list_listeners.values()):
            listener(server, kind)

    @property
    def pool(self) -> ServerPool:
        return self._pool

    async def __aenter__(self) -> Self:
        await self._stack.enter_async_context(self._pool)
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stack.aclose()

    async def list_tools(self, *, server: str | None = None, refresh: bool = False) -> list[ToolSpec]:
        return await self.registry.list_tools(servers=[server] if server else None, refresh=refresh)

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        source: str | None = None,
        timeout: float | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ToolResult:
        """Run one tool; `on_progress` is told the progress its server reports (a `ToolProgress`)."""
        call = ToolCall(name=name, arguments=arguments or {}, source=source)
        plain = timeout is None and on_progress is None
        context = LIBRARY if plain else CallContext(timeout=timeout, on_progress=on_progress)
        return (await self.calls.call(call, context)).result

    async def server_logs(self, server: str) -> list[LogEntry]:
        """Connect `server` (listing its tools) and return the last messages it logged to us.

        Raises `ServerError` when it cannot be reached."""
        await self._pool.list_tools(server)
        return self._pool.connection(server).log.entries

    async def server_status(self) -> list[ServerStatus]:
        """Connect every enabled server (concurrently) and report each one's state."""
        await self.registry.refresh()
        tools = await self.registry.list_tools()
        statuses = []
        for name in self._pool.names:
            config = self._pool.config(name)
            connection = self._pool.connection(name)
            error = self.registry.server_errors.get(name) or connection.last_error
            statuses.append(
                ServerStatus(
                    name=name,
                    transport=connection.transport,
                    target=config.describe(),
                    enabled=config.enabled,
                    state=connection.state if config.enabled else "disabled",
                    tool_count=sum(1 for t in tools if t.source == name) if config.enabled else None,
                    last_error=error,
                    protocol=connection.protocol_version,
                    needs_sign_in=connection.needs_sign_in,
                )
            )
        return statuses
