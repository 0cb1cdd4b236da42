"""Reusing a tool's earlier answer: only where the user opted in, never after a write.

The cache is off unless the config's `cache` section turns it on:
`"cache": {"ttl": 0, "servers": {"docs": 300}, "tools": {"read": 60}, "scope": "chat"}` (TTLs in seconds;
the most specific wins: tool, then server, then `ttl`; 0 turns caching off; a tool is named as in every
config rule, see `toolbridge.config.tool_rules`). What it keeps:

- results of tools a server annotates `readOnlyHint`, for the TTL of their server (`servers`) or the
  default `ttl`; a tool named in `tools` is cached for its own TTL even without the hint (naming it is
  the user saying its answers change only through other tools of its server);
- successful results only, keyed by server, tool and the canonical JSON of the arguments, so
  `{"a": 1, "b": 2}` and `{"b": 2, "a": 1}` share an entry;
- each chat's entries apart (`scope: "chat"`, the default; the caller names the chat), or one set for
  all (`scope: "shared"`).

Every other tool of a server may write, so running it drops all of that server's entries, in every
chat, before and after it runs; a read that was running meanwhile does not store what it read.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from toolbridge.config import CacheConfig, Config
from toolbridge.config.tool_rules import ToolRef, rule_for
from toolbridge.types import ToolResult, ToolSpec

__all__ = ["ResultCache", "argument_hash", "cache_from_config"]

# Read-only, but its answer changes every second: never worth caching unless named in `tools`.
_VOLATILE_TOOLS = frozenset({"get_current_time"})

_Key = tuple[str | None, str, str, str]
"""(chat scope, server, tool as its server knows it, argument hash)."""


def argument_hash(arguments: Mapping[str, Any]) -> str:
    """The sha256 of the arguments' canonical JSON (sorted keys, no spaces)."""
    try:
        canonical = json.dumps(
            arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
        )
    except (ValueError, RecursionError):  # arguments refused as invalid still get a (logged) hash
        canonical = repr(sorted(arguments))
    # surrogatepass: a lone surrogate hashes too (such arguments are refused, but their call is logged).
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class ResultCache:
    """Tool results by (chat, server, tool, canonical arguments), each kept for its tool's TTL."""

    def __init__(
        self,
        settings: CacheConfig | None = None,
        *,
        max_entries: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings or CacheConfig()
        self._max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[_Key, tuple[float, ToolResult]] = OrderedDict()
        # Bumped whenever a server's entries are dropped, so a read that overlapped a write is not kept.
        self._generations: dict[str, int] = {}
        self._policies: dict[tuple[str, str, bool | None], tuple[float, bool]] = {}
        settings = self.settings
        self.keeps_anything = any(
            ttl > 0 for ttl in [settings.ttl or 0.0, *settings.servers.values(), *settings.tools.values()]
        )
        """False when no TTL is set: nothing is kept, so no call has anything to do with the cache."""

    def _policy(self, spec: ToolSpec, original_name: str) -> tuple[float, bool]:
        """(ttl, may write) of a tool, worked out once: matching the config's rules costs per call."""
        key = (spec.source, original_name, spec.annotations.read_only_hint)
        policy = self._policies.get(key)
        if policy is None:
            # Named like every config rule (`config.tool_rules`): own name, `server__tool`, `server:tool`, globs.
            found = rule_for(self.settings.tools, ToolRef(spec.source, original_name))
            named = None if found is None else found[1]
            read_only = bool(spec.annotations.read_only_hint)
            if named is not None:
                ttl = named
            elif not read_only or original_name in _VOLATILE_TOOLS:
                ttl = 0.0
            else:
                ttl = self.settings.servers.get(spec.source, self.settings.ttl or 0.0)
            policy = self._policies[key] = (ttl, not (read_only or named))
        return policy

    def in_play(self, spec: ToolSpec, original_name: str) -> bool:
        """Whether a call of `spec` has anything to do with the cache: its results are kept, or it may
        change what is kept. False for most tools, whose calls then need no cache key."""
        if not self.keeps_anything:
            return False
        ttl, may_write = self._policy(spec, original_name)
        return may_write or ttl > 0

    def ttl(self, spec: ToolSpec, original_name: str) -> float:
        """How long `spec`'s results may be reused: 0 unless the config opted it in."""
        return self._policy(spec, original_name)[0]

    def may_write(self, spec: ToolSpec, original_name: str) -> bool:
        """Whether running `spec` may change what its server's other tools answer."""
        return self._policy(spec, original_name)[1]

    def generation(self, server: str) -> int:
        """A number that changes whenever `server`'s entries are dropped; pass it back to `put`."""
        return self._generations.get(server, 0)

    def forget_server(self, server: str) -> None:
        """Drop every entry of `server`, in every chat (one of its tools may have changed its data)."""
        self._generations[server] = self.generation(server) + 1
        for key in [key for key in self._entries if key[1] == server]:
            del self._entries[key]

    def _key(
        self, spec: ToolSpec, original_name: str, arguments: Mapping[str, Any], chat: str | None
    ) -> _Key:
        scope = chat if self.settings.scope == "chat" else None
        return (scope, spec.source, original_name, argument_hash(arguments))

    def get(
        self, spec: ToolSpec, original_name: str, arguments: Mapping[str, Any], *, chat: str | None = None
    ) -> ToolResult | None:
        key = self._key(spec, original_name, arguments, chat)
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, result = entry
        if self._clock() >= expires:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return result

    def put(
        self,
        spec: ToolSpec,
        original_name: str,
        arguments: Mapping[str, Any],
        result: ToolResult,
        *,
        chat: str | None = None,
        generation: int,
    ) -> None:
        """Keep `result` unless it failed, its tool is not cached, or the server's entries were dropped
        since `generation` was taken (a write ran while this call did, so the result may be stale)."""
        ttl = self.ttl(spec, original_name)
        if ttl <= 0 or result.is_error or generation != self.generation(spec.source):
            return
        key = self._key(spec, original_name, arguments, chat)
        self._entries[key] = (self._clock() + ttl, result)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)


def cache_from_config(config: Config) -> ResultCache:
    """The result cache the config's `cache` section asks for (off when there is none)."""
    return ResultCache(config.cache)
