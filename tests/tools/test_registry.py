"""Routing through the registry, against real MCP servers over stdio and native Python tools."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest

from toolbridge.config import Config, RoutingConfig
from toolbridge.config.model import ServerConfig
from toolbridge.errors import UsageError
from toolbridge.mcp import ServerPool
from toolbridge.tools import Toolbox, ToolRegistry, tool
from toolbridge.types import ToolCall

pytestmark = pytest.mark.anyio

StdioServer = Callable[..., ServerConfig]


@tool
def shout(text: str) -> str:
    """Repeat the text in capitals.

    Args:
        text: What to shout.
    """
    return text.upper()


def config_of(*servers: ServerConfig) -> Config:
    return Config(servers={server.name: server for server in servers})


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module scope, so the servers below start once for the whole module


@pytest.fixture(scope="module")
async def toolbox(stdio_server: StdioServer) -> AsyncIterator[Toolbox]:
    config = config_of(stdio_server("basic"), stdio_server("shadow")).model_copy(
        update={"routing": RoutingConfig(any_source=["appflowy"])}
    )
    async with Toolbox(config, tools=[shout]) as box:
        yield box


async def names(box: Toolbox, **options: Any) -> list[str]:
    return [spec.name for spec in await box.list_tools(**options)]


async def test_names_shared_by_several_sources_are_qualified_and_unique_ones_stay_bare(
    toolbox: Toolbox,
) -> None:
    exposed = await names(toolbox)
    assert {"basic__echo", "shadow__echo", "shadow__calculate", "native__calculate"} <= set(exposed)
    assert {"add", "count_items", "get_current_time", "shout"} <= set(exposed)
    assert "echo" not in exposed
    assert "calculate" not in exposed
    assert len(exposed) == len(set(exposed))


async def test_full_definitions_are_kept(toolbox: Toolbox) -> None:
    specs = {spec.name: spec for spec in await toolbox.list_tools()}
    count = specs["count_items"]
    assert count.source == "shadow"
    assert count.input_schema["required"] == ["items"]
    assert count.input_schema["properties"]["limit"]["default"] == 10
    assert specs["add"].annotations.read_only_hint is True
    assert specs["shout"].source == "native"
    assert specs["shout"].input_schema["properties"]["text"]["description"] == "What to shout."


async def test_find_looks_up_exactly_the_exposed_name(toolbox: Toolbox) -> None:
    found = await toolbox.registry.find("basic__echo")
    assert found is not None
    assert (found.source, found.original_name) == ("basic", "echo")
    assert await toolbox.registry.find("echo") is None  # shared: only its qualified names are exposed
    assert await toolbox.registry.find("no_such_tool") is None


async def test_qualified_name_routes_to_its_server(toolbox: Toolbox) -> None:
    basic = await toolbox.call("basic__echo", {"text": "hi"})
    shadow = await toolbox.call("shadow__echo", {"text": "hi"})
    assert (basic.text, basic.server) == ("hi", "basic")
    assert (shadow.text, shadow.server) == ("shadow: hi", "shadow")


async def test_source_naming_a_server_routes_there(toolbox: Toolbox) -> None:
    result = await toolbox.call("echo", {"text": "x"}, source="shadow")
    assert (result.text, result.server) == ("shadow: x", "shadow")


@pytest.mark.parametrize("source", [None, "native", "appflowy"])
async def test_auto_detection_prefers_mcp_servers_over_native_tools(
    toolbox: Toolbox, source: str | None
) -> None:
    result = await toolbox.call("calculate", {"expression": "15 + 27"}, source=source)
    assert not result.is_error
    assert (result.text, result.server) == ("shadow evaluated 15 + 27", "shadow")


async def test_a_source_means_any_source_only_when_the_config_says_so(stdio_server: StdioServer) -> None:
    async with Toolbox(config_of(stdio_server("basic")), tools=[shout]) as box:
        result = await box.call("shout", {"text": "hey"}, source="appflowy")
    assert result.is_error
    assert "appflowy" in result.text


async def test_a_first_call_from_any_source_lists_the_servers_it_may_be_routed_to(
    stdio_server: StdioServer,
) -> None:
    config = config_of(stdio_server("basic")).model_copy(
        update={"routing": RoutingConfig(any_source=["appflowy"])}
    )
    async with Toolbox(config, native=False) as box:  # nothing listed yet
        result = await box.call("add", {"a": 2, "b": 40}, source="appflowy")
    assert (result.is_error, result.text, result.server) == (False, "42", "basic")


async def test_native_tool_runs_when_no_server_has_it(toolbox: Toolbox) -> None:
    result = await toolbox.call("shout", {"text": "hey"}, source="appflowy")
    assert (result.text, result.server) == ("HEY", "native")
    qualified = await toolbox.call("native__calculate", {"expression": "15 + 27"})
    assert (qualified.text, qualified.server) == ("42", "native")


async def test_a_bare_name_on_two_servers_is_ambiguous_and_says_which_to_call(toolbox: Toolbox) -> None:
    result = await toolbox.call("echo", {"text": "x"})
    assert result.is_error
    assert "ambiguous" in result.text
    assert result.error_kind == "unknown_tool"
    assert "basic__echo" in result.text
    assert "shadow__echo" in result.text


async def test_unknown_tool_is_an_error_result_with_the_closest_names(toolbox: Toolbox) -> None:
    result = await toolbox.call("count_item", {"items": []})
    assert result.is_error
    assert (result.server, result.error_kind) == (None, "unknown_tool")
    assert "Unknown tool 'count_item'" in result.text
    assert "count_items" in result.text


async def test_unknown_source_is_an_error_result_listing_the_known_ones(toolbox: Toolbox) -> None:
    result = await toolbox.call("add", {"a": 1, "b": 2}, source="nowhere")
    assert result.is_error
    assert "Unknown tool source 'nowhere'" in result.text
    assert "basic" in result.text
    assert "shadow" in result.text


async def test_arguments_are_coerced_where_obvious_and_the_coercion_is_noted(toolbox: Toolbox) -> None:
    result = await toolbox.call("add", {"a": "3", "b": 4})
    assert not result.is_error
    assert result.content[0].text == "7"  # type: ignore[union-attr]
    assert result.error_kind is None
    assert result.notes
    assert "a" in result.notes[0]


async def test_invalid_arguments_never_reach_the_server_and_quote_the_schema_error(toolbox: Toolbox) -> None:
    result = await toolbox.call("count_items", {"items": "not a list", "limit": 2})
    assert result.is_error
    # Rejected before anything was sent, and still the tool's failure (stats count it against it).
    assert (result.error_kind, result.server) == ("invalid_arguments", "shadow")
    assert "items" in result.text
    assert "array" in result.text
    missing = await toolbox.call("add", {"a": 1})
    assert missing.is_error
    assert "'b' is a required property" in missing.text
    assert missing.error_kind == "invalid_arguments"


async def test_a_tool_error_from_the_server_is_an_error_result(toolbox: Toolbox) -> None:
    result = await toolbox.call("fail", {"message": "disk full"})
    assert result.is_error
    assert (result.server, result.error_kind) == ("basic", "server_error")
    assert "disk full" in result.text


async def test_a_call_keeps_its_call_id(toolbox: Toolbox) -> None:
    result = await toolbox.calls.call(ToolCall(id="call_7", name="add", arguments={"a": 1, "b": 1}))
    assert result.result.call_id == "call_7"
    unknown = await toolbox.calls.call(ToolCall(id="call_8", name="nope"))
    assert unknown.result.call_id == "call_8"


@pytest.mark.slow
async def test_allow_and_deny_lists_filter_what_is_exposed(stdio_server: StdioServer) -> None:
    config = config_of(
        stdio_server("basic", tools_allow=["ec*", "add"]),
        stdio_server("shadow", tools_deny=["echo", "calculate", "lookup", "touch"]),
    )
    async with Toolbox(config, native=False) as box:
        assert sorted(await names(box)) == ["add", "count_items", "echo"]
        denied = await box.call("calculate", {"expression": "1"})
        assert denied.is_error
        assert "Unknown tool 'calculate'" in denied.text


async def test_a_server_down_at_start_does_not_stop_the_others(stdio_server: StdioServer) -> None:
    broken = ServerConfig(name="broken", transport="stdio", command="toolbridge-no-such-command")
    async with Toolbox(config_of(broken, stdio_server("shadow"))) as box:
        exposed = await names(box)
        assert "count_items" in exposed
        assert "broken" in box.registry.server_errors
        assert "toolbridge-no-such-command" in box.registry.server_errors["broken"]
        ok = await box.call("count_items", {"items": ["a", "b"]})
        assert ok.text == "2"
        down = await box.call("anything", {}, source="broken")
        assert down.is_error
        assert "broken" in down.text
        assert "unavailable" in down.text
        assert down.error_kind == "server_unavailable"


async def test_list_tools_can_be_limited_to_one_server(toolbox: Toolbox) -> None:
    await toolbox.list_tools()  # names are qualified once every server is listed, whatever ran first
    specs = await toolbox.list_tools(server="shadow")
    assert {spec.source for spec in specs} == {"shadow"}
    assert {spec.name for spec in specs} == {
        "shadow__calculate",
        "shadow__echo",
        "count_items",
        "lookup",
        "touch",
    }


async def test_a_tool_added_at_run_time_is_listed_and_callable(stdio_server: StdioServer) -> None:
    async with Toolbox(config_of(stdio_server("basic")), native=False) as box:
        assert "fresh" not in await names(box)
        added = await box.call("add_tool", {"name": "fresh"})
        assert added.text == "added fresh"
        assert "fresh" in await names(box)  # the server's list_changed made the registry re-list
        result = await box.call("fresh", {"text": "new"})
        assert (result.is_error, result.text) == (False, "new")


async def test_listing_while_a_refresh_is_under_way_waits_for_it(stdio_server: StdioServer) -> None:
    async with Toolbox(config_of(stdio_server("basic")), native=False) as box:
        listed: list[str] = []

        async def list_meanwhile() -> None:
            listed.extend(await names(box))

        async with anyio.create_task_group() as group:
            group.start_soon(box.registry.refresh)  # starts the server, so it is slow
            await anyio.wait_all_tasks_blocked()  # the refresh is now waiting for the server
            group.start_soon(list_meanwhile)  # must not see the index before the listing is in
        assert "echo" in listed


async def test_a_call_or_listing_for_one_server_connects_only_that_server(stdio_server: StdioServer) -> None:
    # `silent` never answers: connecting it would hold every call here for its whole connect_timeout.
    never = stdio_server("silent", connect_timeout=600)
    async with Toolbox(config_of(stdio_server("basic"), never)) as box:
        assert (await box.call("add", {"a": 2, "b": 40}, source="basic")).text == "42"
        assert (await box.call("basic__add", {"a": 1, "b": 1})).text == "2"
        assert (await box.call("native__calculate", {"expression": "6 * 7"})).text == "42"
        assert "add" in [spec.name for spec in await box.list_tools(server="basic")]
        assert box.pool.connection("silent").state == "disconnected"
        assert box.pool.connection("basic").state == "connected"


async def test_an_unknown_tool_suggests_tools_whose_words_match(toolbox: Toolbox) -> None:
    result = await toolbox.call("time", {})
    assert result.is_error
    assert "Did you mean: get_current_time?" in result.text  # difflib alone finds nothing for "time"


def test_suggestions_rank_the_tool_with_all_the_words_first() -> None:
    from toolbridge.tools._suggest import closest_names

    exposed = [
        "time__convert_time",
        "time__get_current_time",
        "native__get_current_time",
        "native__calculate",
    ]
    assert closest_names("get_time", exposed)[:2] == ["time__get_current_time", "native__get_current_time"]
    assert closest_names("getTime", ["calculate", "get_current_time"]) == ["get_current_time"]
    assert closest_names("nope", exposed) == []


async def test_a_native_tool_past_its_timeout_is_stopped_with_a_timeout_result() -> None:
    @tool
    async def never_answers() -> str:
        """Wait for an event nobody sets."""
        await anyio.Event().wait()
        return "unreachable"

    async with Toolbox(Config(), native=False, tools=[never_answers]) as box:
        result = await box.call("never_answers", {}, timeout=0.1)
    assert (result.is_error, result.error_kind, result.server) == (True, "timeout", "native")
    assert "timed out after 0.1 s" in result.text


@pytest.mark.slow
async def test_mistakes_in_using_the_api_raise_usage_errors(stdio_server: StdioServer) -> None:
    registry = ToolRegistry(native=[shout])
    with pytest.raises(UsageError, match="already registered"):
        registry.add(shout)
    pool = ServerPool({"basic": stdio_server("basic")})
    with pytest.raises(UsageError, match="outside 'async with'"):
        await pool.call_tool("basic", "add", {"a": 1, "b": 2}, call_id="c1")
