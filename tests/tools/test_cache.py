"""The result cache: only hinted tools, only successes, per-tool TTLs, and hits marked as such."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from toolbridge.config import CacheConfig, Config, parse_config
from toolbridge.config.model import ServerConfig
from toolbridge.errors import ConfigError
from toolbridge.tools import Toolbox
from toolbridge.tools.cache import ResultCache, argument_hash, cache_from_config
from toolbridge.types import TextPart, ToolAnnotations, ToolResult, ToolSpec

StdioServer = Callable[..., ServerConfig]

READ_ONLY = ToolSpec(name="search", source="web", annotations=ToolAnnotations(read_only_hint=True))
IDEMPOTENT = ToolSpec(name="put", source="kv", annotations=ToolAnnotations(idempotent_hint=True))
PLAIN = ToolSpec(name="send", source="mail")


class Clock:
    """A clock the test moves by hand, so expiry is tested without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ok(text: str) -> ToolResult:
    return ToolResult(call_id="c1", content=[TextPart(text=text)])


def test_argument_hash_is_canonical() -> None:
    assert argument_hash({"a": 1, "b": [1, 2]}) == argument_hash({"b": [1, 2], "a": 1})
    assert argument_hash({"a": 1}) != argument_hash({"a": 2})


def test_hinted_results_are_reused_until_their_ttl_runs_out() -> None:
    clock = Clock()
    cache = ResultCache(60, clock=clock)
    cache.put(READ_ONLY, "search", {"q": "x"}, ok("found"))
    cache.put(IDEMPOTENT, "put", {"k": 1}, ok("stored"))
    assert cache.get(READ_ONLY, "search", {"q": "x"}) == ok("found")
    assert cache.get(IDEMPOTENT, "put", {"k": 1}) == ok("stored")
    assert cache.get(READ_ONLY, "search", {"q": "y"}) is None
    clock.now += 59.9
    assert cache.get(READ_ONLY, "search", {"q": "x"}) is not None
    clock.now += 0.1
    assert cache.get(READ_ONLY, "search", {"q": "x"}) is None


def test_tools_without_hints_and_errors_are_never_cached() -> None:
    cache = ResultCache(60)
    cache.put(PLAIN, "send", {}, ok("sent"))
    cache.put(READ_ONLY, "search", {"q": "bad"}, ToolResult.error("c1", "boom", kind="server_error"))
    assert cache.get(PLAIN, "send", {}) is None
    assert cache.get(READ_ONLY, "search", {"q": "bad"}) is None


def test_per_tool_ttl_and_zero_disables() -> None:
    clock = Clock()
    cache = ResultCache(60, {"search": 5, "put": 0}, clock=clock)
    assert cache.ttl(READ_ONLY, "search") == 5
    assert cache.ttl(IDEMPOTENT, "put") == 0
    cache.put(IDEMPOTENT, "put", {}, ok("x"))
    assert cache.get(IDEMPOTENT, "put", {}) is None
    assert ResultCache(0).ttl(READ_ONLY, "search") == 0


def test_the_time_is_never_cached_by_default() -> None:
    time_tool = ToolSpec(name="get_current_time", annotations=ToolAnnotations(read_only_hint=True))
    assert ResultCache().ttl(time_tool, "get_current_time") == 0
    assert ResultCache(ttl_per_tool={"get_current_time": 1}).ttl(time_tool, "get_current_time") == 1


def test_oldest_entries_are_evicted_past_the_limit() -> None:
    cache = ResultCache(60, max_entries=2)
    for key in ("a", "b", "c"):
        cache.put(READ_ONLY, "search", {"q": key}, ok(key))
    assert cache.get(READ_ONLY, "search", {"q": "a"}) is None
    assert cache.get(READ_ONLY, "search", {"q": "c"}) == ok("c")


def test_cache_section_of_the_config(tmp_path: Path) -> None:
    cache = cache_from_config(parse_config({"cache": {"ttl": 10, "tools": {"search": 2}}}))
    assert cache.default_ttl == 10
    assert cache.ttl(READ_ONLY, "search") == 2
    assert cache_from_config(Config()).default_ttl == 300
    with pytest.raises(ConfigError, match=r"cache\.ttl"):
        cache_from_config(parse_config({"cache": {"ttl": "soon"}}, path=tmp_path / "t.json"))
    with pytest.raises(ConfigError, match=r"cache\.tools"):
        cache_from_config(parse_config({"cache": {"tools": {"x": -1}}}))


@pytest.mark.anyio
async def test_a_repeated_read_only_call_is_served_from_the_cache(stdio_server: StdioServer) -> None:
    config = Config(servers={"shadow": stdio_server("shadow")})
    async with Toolbox(config, native=False) as box:
        first = await box.call("lookup", {"key": "k"})
        second = await box.call("lookup", {"key": "k"})
        other = await box.call("lookup", {"key": "other"})
        assert (first.text, first.cached) == ("k looked up 1 time(s)", False)
        assert (second.text, second.cached) == ("k looked up 1 time(s)", True)
        assert second.call_id != first.call_id
        assert other.text == "other looked up 1 time(s)"
        # Not annotated: runs every time.
        assert (await box.call("touch", {"key": "t"})).text == "t touched 1 time(s)"
        again = await box.call("touch", {"key": "t"})
        assert (again.text, again.cached) == ("t touched 2 time(s)", False)


@pytest.mark.anyio
async def test_ttl_zero_in_the_config_turns_the_cache_off(stdio_server: StdioServer) -> None:
    config = Config(servers={"shadow": stdio_server("shadow")}, cache=CacheConfig(ttl=0))
    async with Toolbox(config, native=False) as box:
        await box.call("lookup", {"key": "k"})
        second = await box.call("lookup", {"key": "k"})
        assert (second.text, second.cached) == ("k looked up 2 time(s)", False)
