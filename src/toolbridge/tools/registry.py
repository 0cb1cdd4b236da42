"""The tool registry: every tool a caller can see, indexed by the name it sees, and the source that runs it.

Native tools and the tools of every configured MCP server live side by side. A tool name that
several sources share is exposed as `source__tool` so the model can tell them apart; the bare name
still resolves where it is unambiguous. Routing follows the seeds' rule: a call that names a server
goes there; otherwise MCP servers are tried first, then native tools.

The registry only finds tools; calls go through the pipeline (`toolbridge.tools.pipeline`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import anyio

from toolbridge.config.tool_rules import ToolRef, allowed
from toolbridge.errors import ToolbridgeError, ToolError
from toolbridge.mcp import ServerPool
from toolbridge.tools import refusals
from toolbridge.tools.cache import ResultCache
from toolbridge.tools.function import FunctionTool
from toolbridge.tools.sources import FunctionSource, ServerSource, ToolSource
from toolbridge.types import NATIVE_SOURCE, ToolSpec, qualified_name, split_qualified

__all__ = ["RegisteredTool", "ToolFilter", "ToolRegistry"]

logger = logging.getLogger("toolbridge.tools")

# Sources that mean "find it for me"; the config's `routing.any_source` adds names models invent.
_AUTO_SOURCES = frozenset({NATIVE_SOURCE, ""})

ToolFilter = Callable[[ToolSpec], str | None]
"""Why a caller may not use a tool ("the agent 'x' leaves it out"), or None when it may."""


@dataclass(frozen=True, slots=True)
class RegisteredTool:
    """One tool as exposed: `spec.name` is the exposed name, `original` the name its source knows."""

    spec: ToolSpec
    original: str
    source: ToolSource

    @property
    def native(self) -> bool:
        return isinstance(self.source, FunctionSource)


class ToolRegistry:
    """All tools from native Python functions and MCP servers, and where each one runs."""

    def __init__(
        self,
        pool: ServerPool | None = None,
        native: Iterable[FunctionTool] = (),
        *,
        cache: ResultCache | None = None,
        any_source: Iterable[str] = (),
    ) -> None:
        """`any_source`: source names a call may carry that mean "wherever the tool is", like `native`."""
        self._pool = pool
        self.cache = cache
        """The result cache calls through this registry use (None: off)."""
        self._auto_sources = _AUTO_SOURCES | set(any_source)
        self._functions = FunctionSource()
        self._servers = {name: ServerSource(pool, name) for name in pool.names} if pool is not None else {}
        self._entries: dict[str, RegisteredTool] = {}
        self._by_original: dict[str, list[RegisteredTool]] = {}
        self._listed: dict[str, list[ToolSpec]] = {}
        self._server_errors: dict[str, str] = {}
        # Servers whose listing is missing or out of date. A server is listed (and so connected) only
        # when something needs its tools: `call --server time` never starts the other servers.
        self._stale: set[str] = set(pool.enabled_names) if pool is not None else set()
        self._indexed = False
        self._index_lock = anyio.Lock()
        for tool in native:
            self.add(tool)

    # -- building the index ---------------------------------------------------------------------

    def add(self, tool: FunctionTool) -> None:
        """Register a Python function tool (see `toolbridge.tools.tool`). Names must be unique."""
        self._functions.add(tool)
        self._indexed = False

    def tools_changed(self, server: str) -> None:
        """Note that a server's tool list changed (its `notifications/tools/list_changed`)."""
        self._stale.add(server)
        self._indexed = False

    @property
    def pool(self) -> ServerPool | None:
        """The connections this registry routes MCP calls to."""
        return self._pool

    @property
    def server_errors(self) -> dict[str, str]:
        """Servers whose tools could not be listed at the last refresh, with the reason."""
        return dict(self._server_errors)

    async def refresh(self, servers: Iterable[str] | None = None) -> None:
        """List the servers' tools again (all enabled ones by default; concurrently, connecting on demand).

        A server that cannot be reached is recorded in `server_errors`; the others still work.
        """
        if self._pool is not None:
            enabled = self._pool.enabled_names
            self._stale |= set(enabled if servers is None else [s for s in servers if s in enabled])
        self._indexed = False
        await self._ensure_indexed(servers)

    def _up_to_date(self, servers: Iterable[str] | None) -> bool:
        return self._indexed and not self._stale_among(servers)

    def _stale_among(self, servers: Iterable[str] | None) -> set[str]:
        return set(self._stale) if servers is None else self._stale.intersection(servers)

    async def _ensure_indexed(self, servers: Iterable[str] | None = None) -> None:
        """Make the index current for `servers` (None: every enabled server), listing only what is stale."""
        servers = None if servers is None else set(servers)
        # While someone is (re)building the index, wait for them rather than read a half-built one.
        if self._up_to_date(servers) and not self._index_lock.locked():
            return
        async with self._index_lock:
            while not self._up_to_date(servers):
                # Taken first: a list_changed arriving while we list marks it stale again, and we relist.
                wanted = self._stale_among(servers)
                self._stale -= wanted
                self._indexed = True
                await self._list(wanted)
                self._build_index()

    async def _list(self, servers: set[str]) -> None:
        if not servers:
            return

        async def list_one(server: str) -> None:
            try:
                self._listed[server] = await self._servers[server].list_tools()
                self._server_errors.pop(server, None)
            except ToolbridgeError as exc:
                self._listed.pop(server, None)
                self._server_errors[server] = str(exc)
                logger.info("could not list tools of server %r: %s", server, exc)

        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(list_one, server)

    def _build_index(self) -> None:
        candidates: list[RegisteredTool] = []
        servers = self._pool.enabled_names if self._pool is not None else []
        for server in servers:  # config order, whatever order the listings finished in
            specs = self._listed.get(server, [])
            assert self._pool is not None
            config = self._pool.config(server)
            source = self._servers[server]
            for spec in specs:
                if allowed(ToolRef(server, spec.name), config.tools_allow, config.tools_deny):
                    candidates.append(RegisteredTool(spec, spec.name, source))
        for tool in self._functions.tools.values():
            candidates.append(RegisteredTool(tool.spec, tool.spec.name, self._functions))

        sources_per_name: dict[str, set[str]] = {}
        for entry in candidates:
            sources_per_name.setdefault(entry.original, set()).add(entry.spec.source)

        entries: dict[str, RegisteredTool] = {}
        by_original: dict[str, list[RegisteredTool]] = {}
        for entry in candidates:
            if len(sources_per_name[entry.original]) > 1:
                exposed = qualified_name(entry.spec.source, entry.original)
                renamed = entry.spec.model_copy(update={"name": exposed, "original_name": entry.original})
                entry = RegisteredTool(renamed, entry.original, entry.source)
            entries[entry.spec.name] = entry
            by_original.setdefault(entry.original, []).append(entry)
        self._entries = entries
        self._by_original = by_original

    async def list_tools(
        self, *, servers: Iterable[str] | None = None, refresh: bool = False
    ) -> list[ToolSpec]:
        """Full definitions of every exposed tool (MCP servers in config order, then native tools)."""
        wanted = set(servers) if servers is not None else None
        if refresh:
            await self.refresh(wanted)
        elif self._pool is not None:
            # Offering tools honours a listing's cache hint; finding one for a call does not relist.
            enabled = self._pool.enabled_names
            self._stale |= {
                s for s in enabled if (wanted is None or s in wanted) and self._pool.tools_expired(s)
            }
        await self._ensure_indexed(wanted)
        return [e.spec for e in self._entries.values() if wanted is None or e.spec.source in wanted]

    async def find(self, name: str) -> ToolSpec | None:
        """The tool exposed under exactly `name`, or None: no routing guesses, and no list built (the
        gateway and `POST /tools/{name}` look a tool up on every call)."""
        await self._ensure_indexed()
        entry = self._entries.get(name)
        return entry.spec if entry is not None else None

    def find_listed(self, name: str) -> ToolSpec | None:
        """Like `find`, for synchronous callers: from the tools as last listed, None before any listing."""
        entry = self._entries.get(name)
        return entry.spec if entry is not None else None

    # -- routing --------------------------------------------------------------------------------

    async def resolve(
        self, name: str, source: str | None = None, *, allows: ToolFilter | None = None
    ) -> RegisteredTool:
        """The tool a call of `name` (on `source`) means, listing what it needs first; also when a model
        (un)qualified the name: `excel__read_data`. `allows` says which tools this caller may use: a bare
        name resolves among those, and one it may not use is refused as not allowed.

        Raises the `ToolError` (`toolbridge.tools.refusals`) of an unknown, ambiguous, unavailable or
        not-allowed tool."""
        if not self._indexed or self._stale or self._index_lock.locked():
            await self._ensure_indexed(self._servers_for(name, source))
        if allows is None:
            return self._resolve(name, source, None)
        try:
            entry = self._resolve(name, source, allows)
        except ToolError as exc:
            if exc.kind != "unknown_tool":
                raise
            try:  # a tool this caller may not use: say so rather than "unknown"
                entry = self._resolve(name, source, None)
            except ToolError:
                raise exc from None
        why = allows(entry.spec)
        if why is not None:
            raise refusals.not_allowed(entry.spec, why)
        return entry

    def _resolve(self, name: str, source: str | None, allows: ToolFilter | None) -> RegisteredTool:
        def visible(entry: RegisteredTool) -> bool:
            return allows is None or allows(entry.spec) is None

        source = (source or "").strip()
        if source and source not in self._auto_sources:
            return self._resolve_on_server(name, source, visible)
        exact = self._entries.get(name)
        if exact is not None:
            return exact
        split = split_qualified(name)
        if split is not None:
            # A model may qualify a name that did not need qualifying: `excel__read_data`.
            prefix, rest = split
            if prefix in self._servers or prefix == NATIVE_SOURCE:
                return self._resolve_on_server(rest, prefix, visible)
        matches = [entry for entry in self._by_original.get(name, []) if visible(entry)]
        mcp_matches = [entry for entry in matches if not entry.native]
        if len(mcp_matches) == 1:
            return mcp_matches[0]
        if len(mcp_matches) > 1:
            raise refusals.ambiguous_tool(name, [entry.spec.name for entry in mcp_matches])
        if matches:
            return matches[0]
        raise self._unknown(name, visible)

    def _resolve_on_server(
        self, name: str, source: str, visible: Callable[[RegisteredTool], bool]
    ) -> RegisteredTool:
        for entry in self._by_original.get(name, []):
            if entry.spec.source == source:
                return entry
        if source not in self._servers and source != NATIVE_SOURCE:
            raise refusals.unknown_source(name, source, [*self._servers, NATIVE_SOURCE])
        if source in self._server_errors:
            raise refusals.unavailable_server(name, source, self._server_errors[source])
        raise self._unknown(name, visible, source=source)

    def _servers_for(self, name: str, source: str | None) -> set[str] | None:
        """The servers a call can be routed to: the one it names, or all of them (None), also for a
        source that means "wherever the tool is" (`routing.any_source`)."""
        source = (source or "").strip()
        if source and source not in self._auto_sources:
            return {source}
        split = split_qualified(name)
        if split is not None and split[0] == NATIVE_SOURCE:
            return set()
        if split is not None and split[0] in self._servers:
            return {split[0]}
        return None

    def _unknown(
        self, name: str, visible: Callable[[RegisteredTool], bool], *, source: str | None = None
    ) -> ToolError:
        offered = [
            e.spec.name
            for e in self._entries.values()
            if (source is None or e.spec.source == source) and visible(e)
        ]
        down = self._server_errors if source is None else ()
        return refusals.unknown_tool(name, offered, source=source, unavailable=down)
