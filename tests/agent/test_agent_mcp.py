"""The loop with a real MCP server (tests/servers/basic.py over stdio): concurrent calls meeting in the
server's own tool, a Ctrl-C equivalent cancelling a call running in the server, and a server error."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import anyio
import pytest
from agent_helpers import agent_for, results_sent, scripted_agent, tool_messages

from toolbridge.agent import AgentDefinition, ToolCallStartedEvent
from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.testing import FunctionModel, ToolCallSpec, Turn
from toolbridge.tools import Toolbox
from toolbridge.types import ToolCall

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module scope: the MCP server starts once for the module


@pytest.fixture(scope="module")
async def toolbox(stdio_server: Callable[..., ServerConfig]) -> AsyncIterator[Toolbox]:
    async with Toolbox(Config(servers={"basic": stdio_server("basic")})) as box:
        await box.list_tools()  # connect now, so tests see only their own tasks come and go
        yield box


async def test_a_ctrl_c_cancels_the_call_running_in_the_server_and_leaves_nothing_running(
    toolbox: Toolbox,
) -> None:
    model = FunctionModel.replying(ToolCall(name="sleep", arguments={"ms": 60_000, "tag": "ctrl-c"}))
    agent = agent_for(model, tools=toolbox)
    tasks_before = len(asyncio.all_tasks())
    with anyio.CancelScope() as ctrl_c:
        async with agent.stream("Sleep for a minute.") as stream:
            async for event in stream:
                if isinstance(event, ToolCallStartedEvent):
                    # Every task is waiting: the request went out and the call is running.
                    await anyio.wait_all_tasks_blocked()
                    ctrl_c.cancel()

    assert ctrl_c.cancelled_caught
    assert stream.result is not None
    assert stream.result.stop_reason == "cancelled"
    [record] = stream.result.tool_calls
    assert record.ran is False
    cancelled = await toolbox.call("was_cancelled", {"tag": "ctrl-c"})
    assert cancelled.text == "true"  # the server saw the cancellation: its sleep is not running
    assert len(asyncio.all_tasks()) == tasks_before  # and neither is anything of ours


async def test_calls_to_a_server_run_concurrently(toolbox: Toolbox) -> None:
    # Each call waits in the server until both are running: one after the other, neither would meet.
    calls = [ToolCallSpec("rendezvous", {"tag": t}) for t in ("one", "two")]
    async with scripted_agent([Turn.tool_calls(*calls), Turn.text("Met.")], tools=toolbox) as (
        agent,
        server,
    ):
        await agent.run("Meet twice.")

    assert [m["content"] for m in tool_messages(server.requests[1])] == [
        "one met its peers",
        "two met its peers",
    ]


async def test_a_tool_error_and_a_timeout_come_back_as_results(toolbox: Toolbox) -> None:
    calls = [
        ToolCall(name="fail", arguments={"message": "the disk is full"}),
        ToolCall(name="sleep", arguments={"ms": 10_000}),
    ]
    model = FunctionModel.replying(calls, "Both failed.")
    result = await agent_for(model, tools=toolbox, definition=AgentDefinition(call_timeout=0.2)).run(
        "Try both."
    )

    failed, timed_out = results_sent(model.requests[1])
    assert "the disk is full" in failed.text
    assert "timed out" in timed_out.text
    assert all(record.result.is_error for record in result.tool_calls)
    assert result.output == "Both failed."
