"""A time-limited cache of tool results, for tools whose hints say a repeat call changes nothing.

Only tools annotated `readOnlyHint` or `idempotentHint` are cached, and only successful results.
Keys are server, tool and the canonical JSON of the arguments, so `{"a": 1, "b": 2}` and
`{"b": 2, "a": 1}` share an entry.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from toolbridge.config.model import Config
from toolbridge.types import ToolResult, ToolSpec

__all__ = ["DEFAULT_CACHE_TTL", "ResultCache", "argument_hash", "cache_from_config"]

DEFAULT_CACHE_TTL = 300.0

# Read-only, but its answer changes every second: never worth caching unless the user says so.
_VOLATILE_TOOLS = {"get_current_time": 0.0}


def argument_hash(arguments: Mapping[str, Any]) -> str:
    """The sha256 of the arguments' canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


class ResultCache:
    """Results by (server, tool, canonical arguments), each kept for its tool's TTL in seconds.

    `ttl_per_tool` maps a tool name (as exposed, or as its server knows it) to its TTL; 0 disables
    caching for that tool, and a `default_ttl` of 0 disables the cache.
    """

    def __init__(
        self,
        default_ttl: float = DEFAULT_CACHE_TTL,
        ttl_per_tool: Mapping[str, float] | None = None,
        *,
        max_entries: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.default_ttl = default_ttl
        self._ttl_per_tool = {**_VOLATILE_TOOLS, **(ttl_per_tool or {})}
        self._max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[tuple[str, str, str], tuple[float, ToolResult]] = OrderedDict()

    def ttl(self, spec: ToolSpec, original_name: str) -> float:
        """How long `spec`'s results may be reused: 0 for tools whose hints don't allow it."""
        if not spec.annotations.safe_to_retry:
            return 0.0
        for name in (spec.name, original_name):
            if name in self._ttl_per_tool:
                return self._ttl_per_tool[name]
        return self.default_ttl

    def get(self, spec: ToolSpec, original_name: str, arguments: Mapping[str, Any]) -> ToolResult | None:
        key = (spec.source, original_name, argument_hash(arguments))
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
        self, spec: ToolSpec, original_name: str, arguments: Mapping[str, Any], result: ToolResult
    ) -> None:
        ttl = self.ttl(spec, original_name)
        if ttl <= 0 or result.is_error:
            return
        key = (spec.source, original_name, argument_hash(arguments))
        self._entries[key] = (self._clock() + ttl, result)
        self._entries.move_to_end(key)
        while len(self._entries) > self._max_entries:
            self._entries.popitem(last=False)


def cache_from_config(config: Config) -> ResultCache:
    """The result cache the config's `cache` section asks for (defaults when there is none)."""
    section = config.cache
    return ResultCache(DEFAULT_CACHE_TTL if section.ttl is None else section.ttl, section.tools)
