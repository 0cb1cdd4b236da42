"""MCP Apps visibility (tests/servers/modern.py): a tool its server shows only to an app's UI is never
offered to a model, in native or prompt mode, nor run when a model calls it by name; an app's call may
reach only tools shown to apps."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable

import pytest
from agent_helpers import scripted_agent

from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.models import ToolModeSetting
from toolbridge.testing import ToolCallSpec, Turn
from toolbridge.tools import CallContext, Toolbox, app_may_call
from toolbridge.types import ToolCall

pytestmark = pytest.mark.anyio

FOR_MODELS = {"show_dashboard", "summarize_dashboard", "open_dashboard"}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module scope: the MCP server starts once for the module


@pytest.fixture(scope="module")
async def toolbox(stdio_server: Callable[..., ServerConfig]) -> AsyncIterator[Toolbox]:
    async with Toolbox(Config(servers={"modern": stdio_server("modern")})) as box:
        yield box


async def _calls_seen(toolbox: Toolbox) -> int:
    seen = json.loads((await toolbox.call("requests_seen", {})).text)
    return int(seen.get("tools/call", 0))


@pytest.mark.parametrize("tool_mode", ["native", "prompt"])
async def test_a_tool_only_for_apps_is_never_offered_to_the_model_nor_run_by_name(
    toolbox: Toolbox, tool_mode: ToolModeSetting
) -> None:
    calls_before = await _calls_seen(toolbox)
    turns = [Turn.tool_calls(ToolCallSpec("refresh_dashboard", {})), Turn.text("Could not.")]
    if tool_mode == "prompt":
        turns[0] = Turn.calls_in_text(ToolCallSpec("refresh_dashboard", {}))
    async with scripted_agent(turns, tools=toolbox, tool_mode=tool_mode) as (agent, server):
        result = await agent.run("Refresh the dashboard.")

    first = server.requests[0]
    if tool_mode == "native":
        offered = {tool["function"]["name"] for tool in first.tools}
        assert offered >= FOR_MODELS
        assert "refresh_dashboard" not in offered
    else:
        described = json.dumps(first.messages)
        assert all(name in described for name in FOR_MODELS)
        assert "refresh_dashboard" not in described
    [record] = result.tool_calls
    assert record.result.is_error
    assert record.ran is False
    assert "only to an app" in record.result.text
    # One more tools/call: `requests_seen` itself; refresh_dashboard never reached the server.
    assert await _calls_seen(toolbox) == calls_before + 1


async def test_an_apps_call_reaches_only_tools_shown_to_apps(toolbox: Toolbox) -> None:
    from_app = CallContext(caller="library", allows=app_may_call)
    refreshed = await toolbox.calls.call(ToolCall(name="refresh_dashboard"), from_app)
    shown = await toolbox.calls.call(ToolCall(name="show_dashboard"), from_app)
    refused = await toolbox.calls.call(ToolCall(name="summarize_dashboard"), from_app)

    assert (refreshed.result.text, shown.result.text) == ("dashboard refreshed", "dashboard shown")
    assert refused.result.is_error
    assert "does not let an app" in refused.result.text
