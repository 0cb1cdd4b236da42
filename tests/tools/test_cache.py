"""The result cache: off unless configured, per-server and per-tool TTLs, only read-only tools, chats kept
apart, and never a stale answer after a write (also one that overlapped a read)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolbridge.config import CacheConfig, Config, parse_config
from toolbridge.config.model import ServerConfig
from toolbridge.errors import ConfigError
from toolbridge.tools import CallContext, Toolbox
from toolbridge.tools.cache import ResultCache, argument_hash, cache_from_config
from toolbridge.types import TextPart, ToolAnnotations, ToolCall, ToolResult, ToolSpec

StdioServer = Callable[..., ServerConfig]

READ_ONLY = ToolSpec(name="search", source="web", annotations=ToolAnnotations(read_only_hint=True))
IDEMPOTENT = ToolSpec(name="put", source="kv", annotations=ToolAnnotations(idempotent_hint=True))
PLAIN = ToolSpec(name="send", source="mail")
ON = CacheConfig(ttl=60)


class Clock:
    """A clock the test moves by hand, so expiry is tested without waiting."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ok(text: str) -> ToolResult:
    return ToolResult(call_id="c1", content=[TextPart(text=text)])


def put(cache: ResultCache, spec: ToolSpec, arguments: dict[str, object], text: str, **scope: str) -> None:
    generation = cache.generation(spec.source)
    cache.put(spec, spec.name, arguments, ok(text), generation=generation, **scope)


def test_argument_hash_is_canonical() -> None:
    assert argument_hash({"a": 1, "b": [1, 2]}) == argument_hash({"b": [1, 2], "a": 1})
    assert argument_hash({"a": 1}) != argument_hash({"a": 2})


def test_the_cache_is_off_unless_the_config_turns_it_on() -> None:
    cache = ResultCache()
    assert cache.ttl(READ_ONLY, "search") == 0
    put(cache, READ_ONLY, {"q": "x"}, "found")
    assert cache.get(READ_ONLY, "search", {"q": "x"}) is None


def test_read_only_results_are_reused_until_their_ttl_runs_out() -> None:
    clock = Clock()
    cache = ResultCache(ON, clock=clock)
    put(cache, READ_ONLY, {"q": "x"}, "found")
    assert cache.get(READ_ONLY, "search", {"q": "x"}) == ok("found")
    assert cache.get(READ_ONLY, "search", {"q": "y"}) is None
    clock.now += 59.9
    assert cache.get(READ_ONLY, "search", {"q": "x"}) is not None
    clock.now += 0.1
    assert cache.get(READ_ONLY, "search", {"q": "x"}) is None


def test_only_read_only_tools_and_successes_are_cached() -> None:
    cache = ResultCache(ON)
    put(cache, PLAIN, {}, "sent")
    put(cache, IDEMPOTENT, {}, "stored")  # idempotent is not read-only: a repeat may still write
    generation = cache.generation("web")
    cache.put(
        READ_ONLY,
        "search",
        {"q": "bad"},
        ToolResult.error("c1", "boom", kind="server_error"),
        generation=generation,
    )
    assert cache.get(PLAIN, "send", {}) is None
    assert cache.get(IDEMPOTENT, "put", {}) is None
    assert cache.get(READ_ONLY, "search", {"q": "bad"}) is None
    assert (cache.may_write(PLAIN, "send"), cache.may_write(READ_ONLY, "search")) == (True, False)


def test_the_most_specific_ttl_wins_and_a_named_tool_needs_no_hint() -> None:
    settings = CacheConfig(ttl=60, servers={"web": 5, "kv": 0}, tools={"send": 2, "docs__search": 0})
    cache = ResultCache(settings)
    assert cache.ttl(READ_ONLY, "search") == 5
    # A rule follows the tool, whatever name a collision exposes it under (`config.tool_rules`).
    in_docs = READ_ONLY.model_copy(update={"source": "docs"})
    assert cache.ttl(in_docs, "search") == 0
    assert cache.ttl(in_docs.model_copy(update={"name": "docs__search"}), "search") == 0
    assert cache.ttl(PLAIN, "send") == 2  # named: the user says its answers only change through writes
    assert not cache.may_write(PLAIN, "send")
    other = ToolSpec(name="get", source="kv", annotations=ToolAnnotations(read_only_hint=True))
    assert cache.ttl(other, "get") == 0


def test_the_time_is_never_cached_unless_named() -> None:
    time_tool = ToolSpec(name="get_current_time", annotations=ToolAnnotations(read_only_hint=True))
    assert ResultCache(ON).ttl(time_tool, "get_current_time") == 0
    assert ResultCache(CacheConfig(tools={"get_current_time": 1})).ttl(time_tool, "get_current_time") == 1


def test_each_chat_has_its_own_entries_unless_the_scope_is_shared() -> None:
    per_chat = ResultCache(ON)
    put(per_chat, READ_ONLY, {"q": "x"}, "found", chat="chat 1")
    assert per_chat.get(READ_ONLY, "search", {"q": "x"}, chat="chat 1") == ok("found")
    assert per_chat.get(READ_ONLY, "search", {"q": "x"}, chat="chat 2") is None

    shared = ResultCache(CacheConfig(ttl=60, scope="shared"))
    put(shared, READ_ONLY, {"q": "x"}, "found", chat="chat 1")
    assert shared.get(READ_ONLY, "search", {"q": "x"}, chat="chat 2") == ok("found")


def test_forgetting_a_server_drops_its_entries_in_every_chat_and_refuses_reads_begun_before() -> None:
    cache = ResultCache(ON)
    elsewhere = ToolSpec(name="find", source="docs", annotations=ToolAnnotations(read_only_hint=True))
    put(cache, READ_ONLY, {"q": "x"}, "old", chat="chat 1")
    put(cache, READ_ONLY, {"q": "x"}, "old", chat="chat 2")
    put(cache, elsewhere, {}, "kept")
    before_the_write = cache.generation("web")

    cache.forget_server("web")

    assert cache.get(READ_ONLY, "search", {"q": "x"}, chat="chat 1") is None
    assert cache.get(READ_ONLY, "search", {"q": "x"}, chat="chat 2") is None
    assert cache.get(elsewhere, "find", {}) == ok("kept")
    cache.put(READ_ONLY, "search", {"q": "x"}, ok("read during the write"), generation=before_the_write)
    assert cache.get(READ_ONLY, "search", {"q": "x"}) is None


def test_oldest_entries_are_evicted_past_the_limit() -> None:
    cache = ResultCache(ON, max_entries=2)
    for key in ("a", "b", "c"):
        put(cache, READ_ONLY, {"q": key}, key)
    assert cache.get(READ_ONLY, "search", {"q": "a"}) is None
    assert cache.get(READ_ONLY, "search", {"q": "c"}) == ok("c")


def test_cache_section_of_the_config(tmp_path: Path) -> None:
    section = {"ttl": 10, "servers": {"web": 3}, "tools": {"search": 2}, "scope": "shared"}
    cache = cache_from_config(parse_config({"cache": section}))
    assert cache.settings == CacheConfig(ttl=10, servers={"web": 3}, tools={"search": 2}, scope="shared")
    assert cache_from_config(Config()).settings == CacheConfig()
    with pytest.raises(ConfigError, match=r"cache\.ttl"):
        cache_from_config(parse_config({"cache": {"ttl": "soon"}}, path=tmp_path / "t.json"))
    with pytest.raises(ConfigError, match=r"cache\.tools\.x"):
        cache_from_config(parse_config({"cache": {"tools": {"x": -1}}}))
    with pytest.raises(ConfigError, match=r"cache\.scope"):
        cache_from_config(parse_config({"cache": {"scope": "everyone"}}))
    with pytest.raises(ConfigError, match=r"cache\.ttls"):
        cache_from_config(parse_config({"cache": {"ttls": 5}}))


# -- with real MCP servers ------------------------------------------------------------------------------


def cached_config(servers: dict[str, ServerConfig], cache: dict[str, Any] | None) -> Config:
    return Config(servers=servers, cache=CacheConfig.model_validate(cache or {}))


@pytest.mark.anyio
async def test_without_a_cache_section_every_call_runs(stdio_server: StdioServer) -> None:
    async with Toolbox(cached_config({"shadow": stdio_server("shadow")}, None), native=False) as box:
        await box.call("lookup", {"key": "k"})
        second = await box.call("lookup", {"key": "k"})
    assert (second.text, second.cached) == ("k looked up 2 time(s)", False)


@pytest.mark.anyio
async def test_a_repeated_read_only_call_is_served_from_the_cache_until_a_write(
    stdio_server: StdioServer,
) -> None:
    config = cached_config({"shadow": stdio_server("shadow")}, {"servers": {"shadow": 300}})
    async with Toolbox(config, native=False) as box:
        first = await box.call("lookup", {"key": "k"})
        second = await box.call("lookup", {"key": "k"})
        other = await box.call("lookup", {"key": "other"})
        # `touch` is not read-only: it may have changed what `lookup` answers.
        touched = await box.call("touch", {"key": "t"})
        after_the_write = await box.call("lookup", {"key": "k"})

    assert (first.text, first.cached) == ("k looked up 1 time(s)", False)
    assert (second.text, second.cached) == ("k looked up 1 time(s)", True)
    assert second.call_id != first.call_id
    assert other.text == "other looked up 1 time(s)"
    assert (touched.text, touched.cached) == ("t touched 1 time(s)", False)
    assert (after_the_write.text, after_the_write.cached) == ("k looked up 2 time(s)", False)


@pytest.mark.anyio
async def test_a_read_after_a_write_sees_the_write(stdio_server: StdioServer) -> None:
    config = cached_config({"notebook": stdio_server("notebook")}, {"ttl": 300})
    async with Toolbox(config, native=False) as box:
        before = await box.call("read_note", {"name": "n"})
        assert (await box.call("read_note", {"name": "n"})).cached
        await box.call("write_note", {"name": "n", "text": "new"})
        after = await box.call("read_note", {"name": "n"})
    assert before.text == "n: (empty) (read 1)"
    assert (after.text, after.cached) == ("n: new (read 2)", False)


@pytest.mark.anyio
async def test_a_read_that_overlapped_a_write_is_not_kept(stdio_server: StdioServer) -> None:
    config = cached_config({"notebook": stdio_server("notebook")}, {"ttl": 300})
    async with Toolbox(config, native=False) as box:
        await box.call("hold_reads")
        overlapping: list[ToolResult] = []

        async def read() -> None:
            overlapping.append(await box.call("read_note", {"name": "n"}))

        async with anyio.create_task_group() as group:
            group.start_soon(read)
            # The server lets the write in only once the read has its (old) value, and the read
            # answers only after the write has finished: its answer arrives after the write.
            await box.call("write_note", {"name": "n", "text": "new"})
            await box.call("release_reads")
        after = await box.call("read_note", {"name": "n"})

    assert overlapping[0].text == "n: (empty) (read 1)"
    assert (after.text, after.cached) == ("n: new (read 2)", False)


@pytest.mark.anyio
async def test_conversations_keep_their_entries_apart_and_writes_reach_them_all(
    stdio_server: StdioServer,
) -> None:
    config = cached_config({"notebook": stdio_server("notebook")}, {"ttl": 300})
    read = ToolCall(name="read_note", arguments={"name": "n"})
    chat_1, chat_2 = CallContext(cache_scope="chat 1"), CallContext(cache_scope="chat 2")
    async with Toolbox(config, native=False) as box:
        first = (await box.calls.call(read, chat_1)).result
        again = (await box.calls.call(read, chat_1)).result
        other_chat = (await box.calls.call(read, chat_2)).result
        await box.calls.call(ToolCall(name="write_note", arguments={"name": "n", "text": "new"}), chat_2)
        after_the_write = (await box.calls.call(read, chat_1)).result

    assert (first.cached, again.cached) == (False, True)
    assert (other_chat.text, other_chat.cached) == ("n: (empty) (read 2)", False)
    assert (after_the_write.text, after_the_write.cached) == ("n: new (read 3)", False)


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.published
async def test_excel_cells_read_after_a_write_are_the_new_ones(published_server, tmp_path: Path) -> None:
    book = str(tmp_path / "cells.xlsx")
    excel = published_server("excel-mcp-server", name="excel", cwd=str(tmp_path))
    cell = {"path": book, "sheet": "Data", "range": "A1:A1"}
    async with Toolbox(cached_config({"excel": excel}, {"servers": {"excel": 300}}), native=False) as box:
        await box.call("create_workbook", {"path": book, "sheets": ["Data"]})
        await box.call("write_range", {"path": book, "sheet": "Data", "at": "A1", "rows": [["old"]]})
        first = await box.call("read_range", cell)
        assert (await box.call("read_range", cell)).cached
        await box.call("write_range", {"path": book, "sheet": "Data", "at": "A1", "rows": [["new"]]})
        after = await box.call("read_range", cell)

    assert "old" in first.text
    assert not after.cached
    assert "new" in after.text
    assert "old" not in after.text
