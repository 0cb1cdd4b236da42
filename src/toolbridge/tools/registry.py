"""The tool registry: every tool an agent can see, and routing a call to the place that runs it.

Native tools and the tools of every configured MCP server live side by side. A tool name that
several sources share is exposed as `source__tool` so the model can tell them apart; the bare name
still resolves where it is unambiguous. Routing follows the seeds' rule: a call that names a server
goes there; otherwise MCP servers are tried first, then native tools.

Everything a model can get wrong (an unknown tool, bad arguments, a server that is down, a timeout)
comes back as an error `ToolResult` it can read and correct; `call()` does not raise for those.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass

import anyio

from toolbridge.config.tool_rules import ToolRef, allowed
from toolbridge.errors import (
    ServerError,
    ServerTimeoutError,
    ToolArgumentsError,
    ToolbridgeError,
    UnknownToolError,
    UsageError,
)
from toolbridge.mcp import ProgressHandler, ServerPool
from toolbridge.tools._suggest import closest_names
from toolbridge.tools.cache import ResultCache
from toolbridge.tools.function import FunctionTool
from toolbridge.tools.validation import validate_arguments
from toolbridge.types import NATIVE_SOURCE, QUALIFIER, ToolCall, ToolErrorKind, ToolResult, ToolSpec

__all__ = ["QUALIFIER", "ToolRegistry", "error_kind"]

logger = logging.getLogger("toolbridge.tools")

# Sources that mean "find it for me"; the config's `routing.any_source` adds names models invent.
_AUTO_SOURCES = frozenset({NATIVE_SOURCE, ""})

NATIVE_CALL_TIMEOUT = 60.0


@dataclass(frozen=True)
class _Entry:
    """One tool as exposed: `spec.name` is the exposed name, `original` the name its source knows."""

    spec: ToolSpec
    original: str
    native: FunctionTool | None = None

    @property
    def source(self) -> str:
        return self.spec.source


class ToolRegistry:
    """All tools from native Python functions and MCP servers, with routing and argument checks."""

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
        self._cache = cache
        self._auto_sources = _AUTO_SOURCES | set(any_source)
        self._native: dict[str, FunctionTool] = {}
        self._entries: dict[str, _Entry] = {}
        self._by_original: dict[str, list[_Entry]] = {}
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
        if tool.spec.name in self._native:
            raise UsageError(
                f"a native tool named {tool.spec.name!r} is already registered; rename one of them"
            )
        self._native[tool.spec.name] = tool
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
        if self._pool is None or not servers:
            return
        pool = self._pool

        async def list_one(server: str) -> None:
            try:
                self._listed[server] = await pool.list_tools(server)
                self._server_errors.pop(server, None)
            except ToolbridgeError as exc:
                self._listed.pop(server, None)
                self._server_errors[server] = str(exc)
                logger.info("could not list tools of server %r: %s", server, exc)

        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(list_one, server)

    def _build_index(self) -> None:
        candidates: list[_Entry] = []
        servers = self._pool.enabled_names if self._pool is not None else []
        for server in servers:  # config order, whatever order the listings finished in
            specs = self._listed.get(server, [])
            assert self._pool is not None
            config = self._pool.config(server)
            for spec in specs:
                if allowed(ToolRef(server, spec.name), config.tools_allow, config.tools_deny):
                    candidates.append(_Entry(spec=spec, original=spec.name))
        for tool in self._native.values():
            candidates.append(_Entry(spec=tool.spec, original=tool.spec.name, native=tool))

        sources_per_name: dict[str, set[str]] = {}
        for entry in candidates:
            sources_per_name.setdefault(entry.original, set()).add(entry.source)

        entries: dict[str, _Entry] = {}
        by_original: dict[str, list[_Entry]] = {}
        for entry in candidates:
            if len(sources_per_name[entry.original]) > 1:
                exposed = f"{entry.source}{QUALIFIER}{entry.original}"
                renamed = entry.spec.model_copy(update={"name": exposed, "original_name": entry.original})
                entry = _Entry(spec=renamed, original=entry.original, native=entry.native)
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
        await self._ensure_indexed(wanted)
        return [e.spec for e in self._entries.values() if wanted is None or e.source in wanted]

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

    def _resolve(self, call: ToolCall) -> _Entry:
        source = (call.source or "").strip()
        if source and source not in self._auto_sources:
            return self._resolve_on_server(call.name, source)
        exact = self._entries.get(call.name)
        if exact is not None:
            return exact
        if QUALIFIER in call.name:
            # A model may qualify a name that did not need qualifying: `excel__read_data`.
            prefix, _, rest = call.name.partition(QUALIFIER)
            if prefix in self._server_names() or prefix == NATIVE_SOURCE:
                return self._resolve_on_server(rest, prefix)
        matches = self._by_original.get(call.name, [])
        mcp_matches = [e for e in matches if e.native is None]
        if len(mcp_matches) == 1:
            return mcp_matches[0]
        if len(mcp_matches) > 1:
            names = ", ".join(e.spec.name for e in mcp_matches)
            raise UnknownToolError(
                f"Tool name {call.name!r} is ambiguous: several servers have it. Call one of: {names}.",
                tool=call.name,
                suggestions=[e.spec.name for e in mcp_matches],
            )
        if matches:
            return matches[0]
        raise self._unknown(call.name)

    def _resolve_on_server(self, name: str, source: str) -> _Entry:
        for entry in self._by_original.get(name, []):
            if entry.source == source:
                return entry
        if source not in self._server_names() and source != NATIVE_SOURCE:
            known = ", ".join([*self._server_names(), NATIVE_SOURCE])
            raise UnknownToolError(
                f"Unknown tool source {source!r}. Known sources: {known}. "
                "Call the tool by its name alone and toolbridge will find it.",
                tool=name,
            )
        if source in self._server_errors:
            raise ServerError(
                f"Server {source!r} is unavailable: {self._server_errors[source]}", server=source
            )
        raise self._unknown(name, source=source)

    def _servers_for(self, call: ToolCall) -> set[str] | None:
        """The servers a call can be routed to: the one it names, or all of them (None)."""
        source = (call.source or "").strip()
        if source and source not in _AUTO_SOURCES:
            return {source}
        prefix, qualified, _ = call.name.partition(QUALIFIER)
        if qualified and prefix == NATIVE_SOURCE:
            return set()
        if qualified and prefix in self._server_names():
            return {prefix}
        return None

    def _server_names(self) -> list[str]:
        return list(self._pool.names) if self._pool is not None else []

    def _unknown(self, name: str, *, source: str | None = None) -> UnknownToolError:
        pool = [e.spec.name for e in self._entries.values() if source is None or e.source == source]
        close = closest_names(name, pool)
        where = f" on {source!r}" if source else ""
        message = f"Unknown tool {name!r}{where}."
        if close:
            message += f" Did you mean: {', '.join(close)}?"
        else:
            message += f" Available tools: {', '.join(sorted(pool)[:30]) or 'none'}."
        if self._server_errors and source is None:
            down = ", ".join(sorted(self._server_errors))
            message += f" (Servers currently unavailable, whose tools are not listed: {down}.)"
        message += " Call one of the available tools with its exact name."
        return UnknownToolError(message, tool=name, suggestions=close)

    # -- calling --------------------------------------------------------------------------------

    async def call(
        self,
        call: ToolCall,
        *,
        timeout: float | None = None,
        cache_scope: str | None = None,
        on_progress: ProgressHandler | None = None,
    ) -> ToolResult:
        """Run one call and return its result. Never raises for errors a model can correct.

        `cache_scope` names the conversation the call belongs to: the result cache keeps each
        conversation's entries apart (unless configured shared). `on_progress` is told the progress
        an MCP server reports on the call.
        """
        started = time.perf_counter()
        if not self._indexed or self._stale or self._index_lock.locked():
            await self._ensure_indexed(self._servers_for(call))
        try:
            entry = self._resolve(call)
        except ToolbridgeError as exc:
            return ToolResult.error(
                call.id, str(exc), kind=error_kind(exc), duration=time.perf_counter() - started
            )
        try:
            arguments, notes = validate_arguments(entry.spec, call.arguments)
        except ToolArgumentsError as exc:
            # Counted against the tool it was meant for, though the tool never ran.
            return ToolResult.error(
                call.id,
                str(exc),
                kind="invalid_arguments",
                server=entry.source,
                duration=time.perf_counter() - started,
            )

        routed = call if arguments is call.arguments else call.model_copy(update={"arguments": arguments})
        cache = self._cache
        if cache is None or not cache.in_play(entry.spec, entry.original):
            # Never kept, and nothing kept to drop: no cache key to work out.
            result = await self._dispatch(entry, routed, timeout, on_progress)
        else:
            result = await self._call_through_cache(cache, entry, routed, timeout, cache_scope, on_progress)
        if notes:
            result = result.model_copy(update={"notes": [*notes, *result.notes]})
        return result

    async def _call_through_cache(
        self,
        cache: ResultCache,
        entry: _Entry,
        call: ToolCall,
        timeout: float | None,
        scope: str | None,
        on_progress: ProgressHandler | None,
    ) -> ToolResult:
        if cache.may_write(entry.spec, entry.original):
            # Before: no read may be served the data this call replaces. After: nor what a read that
            # overlapped it saw. Also when it fails: it may have written part of its change.
            cache.forget_server(entry.source)
            try:
                return await self._dispatch(entry, call, timeout, on_progress)
            finally:
                cache.forget_server(entry.source)
        if cache.ttl(entry.spec, entry.original) <= 0:
            return await self._dispatch(entry, call, timeout, on_progress)
        started = time.perf_counter()
        hit = cache.get(entry.spec, entry.original, call.arguments, chat=scope)
        if hit is not None:
            update = {"call_id": call.id, "cached": True, "duration": time.perf_counter() - started}
            return hit.model_copy(update=update)
        generation = cache.generation(entry.source)
        result = await self._dispatch(entry, call, timeout, on_progress)
        cache.put(entry.spec, entry.original, call.arguments, result, chat=scope, generation=generation)
        return result

    async def _dispatch(
        self, entry: _Entry, call: ToolCall, timeout: float | None, on_progress: ProgressHandler | None = None
    ) -> ToolResult:
        started = time.perf_counter()
        if entry.native is not None:
            limit = timeout if timeout is not None else NATIVE_CALL_TIMEOUT
            with anyio.move_on_after(limit):
                return await entry.native.run(call.model_copy(update={"name": entry.original}))
            return ToolResult.error(
                call.id,
                f"Tool {entry.spec.name!r} timed out after {limit:g} s and was stopped. "
                "Try simpler arguments, or tell the user the tool did not answer in time.",
                kind="timeout",
                server=NATIVE_SOURCE,
                duration=time.perf_counter() - started,
            )
        assert self._pool is not None
        try:
            connection = self._pool.connection(entry.source)
            return await connection.call_tool(
                entry.original, call.arguments, call_id=call.id, timeout=timeout, on_progress=on_progress
            )
        except ToolbridgeError as exc:
            return ToolResult.error(
                call.id,
                str(exc),
                kind=error_kind(exc),
                server=entry.source,
                duration=time.perf_counter() - started,
            )


def error_kind(error: ToolbridgeError) -> ToolErrorKind:
    """The kind of failed call a raised error stands for, when it becomes a result for the model."""
    if isinstance(error, UnknownToolError):
        return "unknown_tool"
    if isinstance(error, ToolArgumentsError):
        return "invalid_arguments"
    if isinstance(error, ServerTimeoutError):
        return "timeout"
    if isinstance(error, ServerError):
        return "server_unavailable"
    return "server_error"
