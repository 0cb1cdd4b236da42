"""Tool calls a server runs as tasks (the `io.modelcontextprotocol/tasks` extension): the task's result is
the call's result, its status messages arrive as progress, a stopped call cancels the task, an input
request inside the task is answered by the client's features, and a lost session resumes the task."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as mcp
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection, ToolProgress
from toolbridge.mcp.client_features import ClientFeatures

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["stdio", "streamable-http"])
def tasks_config(
    request: pytest.FixtureRequest, stdio_server: Callable[..., ServerConfig], http_server: Callable[..., Any]
) -> ServerConfig:
    if request.param == "stdio":
        return stdio_server("tasks_server", name="tasks")
    return http_server("tasks_server", "streamable-http").config("tasks")


async def test_a_tasks_result_is_the_calls_result_and_its_status_messages_are_progress(
    tasks_config: ServerConfig,
) -> None:
    reports: list[ToolProgress] = []

    async def on_progress(progress: ToolProgress) -> None:
        reports.append(progress)

    async with ServerConnection(tasks_config) as server:
        result = await server.call_tool(
            "slow_compute",
            {"seconds": 0.3, "label": "sums", "steps": 3},
            call_id="c1",
            on_progress=on_progress,
        )

    assert (result.is_error, result.text) == (False, "computed sums")
    messages = [report.message for report in reports]
    assert messages[-1] == "step 3 of 3 for sums"
    assert set(messages) <= {f"step {n} of 3 for sums" for n in (1, 2, 3)}


async def test_a_stopped_call_cancels_its_task_at_the_server(tasks_config: ServerConfig) -> None:
    holding = anyio.Event()

    async def on_progress(progress: ToolProgress) -> None:
        if progress.message == "holding t1":
            holding.set()

    async with ServerConnection(tasks_config) as server:
        async with anyio.create_task_group() as group:

            async def hold() -> None:
                await server.call_tool("hold", {"tag": "t1"}, call_id="h", on_progress=on_progress)

            group.start_soon(hold)
            await holding.wait()
            group.cancel_scope.cancel()
        seen = await server.call_tool("was_cancelled", {"tag": "t1"}, call_id="w")

    assert seen.text == "true"


async def test_an_input_request_inside_a_task_is_answered_by_the_elicitation_feature(
    tasks_config: ServerConfig,
) -> None:
    asked: list[tuple[str, str]] = []

    async def elicit(server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        asked.append((server, params.message))
        return mcp.ElicitResult(action="accept", content={"confirm": True})

    async with ServerConnection(tasks_config, features=ClientFeatures(elicitation=elicit)) as server:
        result = await server.call_tool("confirm_delete", {"filename": "a.txt"}, call_id="d")

    assert (result.is_error, result.text) == (False, "deleted a.txt")
    assert asked == [("tasks", "Delete a.txt?")]


async def test_a_tool_that_is_not_a_task_answers_as_before(tasks_config: ServerConfig) -> None:
    async with ServerConnection(tasks_config) as server:
        result = await server.call_tool("greet", {"name": "Ada"}, call_id="g")
    assert result.text == "Hello, Ada!"
