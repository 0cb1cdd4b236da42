"""Tool search with 300 tools of a real MCP server (tests/servers/many_tools.py), a scripted model over the
real OpenAI wire: the first request offers `search_tools` (and the pinned tools) instead of the catalog, a
search finds the right tool, which is offered from the next step on and runs; in native and prompt mode."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

import pytest
from agent_helpers import scripted_agent

from toolbridge.agent import AgentDefinition
from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.models import ToolModeSetting
from toolbridge.testing import ToolCallSpec, Turn
from toolbridge.tools import Toolbox

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module scope: the MCP server starts once for the module


@pytest.fixture(scope="module")
async def toolbox(stdio_server: Callable[..., ServerConfig]) -> AsyncIterator[Toolbox]:
    async with Toolbox(Config(servers={"many": stdio_server("many_tools")})) as box:
        yield box


def _calls(turn_calls: ToolCallSpec, tool_mode: ToolModeSetting) -> Turn:
    return Turn.calls_in_text(turn_calls) if tool_mode == "prompt" else Turn.tool_calls(turn_calls)


@pytest.mark.parametrize("tool_mode", ["native", "prompt"])
async def test_with_300_tools_the_model_searches_finds_and_calls_the_right_one(
    toolbox: Toolbox, tool_mode: ToolModeSetting
) -> None:
    turns = [
        _calls(ToolCallSpec("search_tools", {"query": "weather forecast for a city"}), tool_mode),
        _calls(ToolCallSpec("weather_forecast", {"city": "Oslo", "days": 2}), tool_mode),
        Turn.text("Rain in Oslo."),
    ]
    definition = AgentDefinition(pinned_tools=["time_in_zone"])  # tool_search: "auto"
    async with scripted_agent(turns, tools=toolbox, definition=definition, tool_mode=tool_mode) as (
        agent,
        server,
    ):
        result = await agent.run("What is the weather in Oslo?")

    assert result.output == "Rain in Oslo."
    assert [record.call.name for record in result.tool_calls] == ["search_tools", "weather_forecast"]
    assert result.tool_calls[1].result.text == "weather_forecast"  # the server's tool ran
    assert "weather_forecast(city: string, days?: integer)" in result.tool_calls[0].result.text
    first, second, _ = server.requests
    if tool_mode == "native":
        assert first.tool_names == ["time_in_zone", "search_tools"]
        assert second.tool_names[:2] == ["time_in_zone", "search_tools"]  # kept first: the prefix is stable
        assert "weather_forecast" in second.tool_names
    else:
        assert first.tools == []
        assert "weather_forecast" not in first.messages[0]["content"]
        assert "weather_forecast" in second.messages[0]["content"]


async def test_the_first_request_is_a_small_part_of_the_full_catalogs(toolbox: Toolbox) -> None:
    sizes: dict[bool, int] = {}
    for search in (True, False):
        definition = AgentDefinition(tool_search=search)
        async with scripted_agent([Turn.text("Hello.")], tools=toolbox, definition=definition) as (
            agent,
            server,
        ):
            await agent.run("Hi")
        sizes[search] = len(json.dumps(server.requests[0].body))
    assert sizes[True] <= 0.05 * sizes[False], sizes


async def test_auto_searches_only_beyond_40_tools(stdio_server: Callable[..., ServerConfig]) -> None:
    few = stdio_server("basic")
    box = Toolbox(Config(servers={"basic": few}), native=False)
    async with box, scripted_agent([Turn.text("Hello.")], tools=box) as (agent, server):
        await agent.run("Hi")
    assert "search_tools" not in server.requests[0].tool_names
    assert "echo" in server.requests[0].tool_names


async def test_a_model_configured_without_search_is_sent_every_tool_unless_its_agent_says_otherwise(
    toolbox: Toolbox,
) -> None:
    for agent_setting, searched in ((None, False), (True, True)):
        definition = AgentDefinition(tool_search=agent_setting)
        async with scripted_agent([Turn.text("Hi.")], tools=toolbox, definition=definition) as (
            agent,
            server,
        ):
            agent.model.tool_search = False  # as `"tool_search": false` in the model's config entry
            await agent.run("Hi")
        offered = server.requests[0].tool_names
        assert ("search_tools" in offered) is searched
        assert (len(offered) > 300) is not searched  # and the two native tools
