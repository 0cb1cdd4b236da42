"""The two ends of a task's handle, on a real task server (tests/servers/tasks_server.py over stdio): a
call a server turns into a task hands its handle to the run that records tasks, and a call made inside
`resuming_tasks` with that handle follows the same task instead of starting the tool again."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.tasks import TaskHandle, record_tasks, resuming_tasks

pytestmark = pytest.mark.anyio


async def test_a_recorded_task_handle_is_followed_by_a_resumed_call_without_running_the_tool_again(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    handles: list[TaskHandle] = []
    recorded = anyio.Event()
    results: dict[str, str] = {}

    def record(handle: TaskHandle) -> None:
        handles.append(handle)
        recorded.set()

    async with ServerConnection(stdio_server("tasks_server", name="tasks")) as server:

        async def first_call() -> None:
            record_tasks(record)  # this task's own context, as a run's
            result = await server.call_tool("wait_for_release", {"tag": "h"}, call_id="call_first")
            results["first"] = result.text

        async def resumed_call(handle: TaskHandle) -> None:
            with resuming_tasks([handle]):
                result = await server.call_tool("wait_for_release", {"tag": "h"}, call_id=handle.call_id)
            results["resumed"] = result.text

        async with anyio.create_task_group() as group:
            group.start_soon(first_call)
            with anyio.fail_after(30):
                await recorded.wait()
            (handle,) = handles
            assert (handle.server, handle.call_id, handle.tool) == ("tasks", "call_first", "wait_for_release")
            assert handle.task_id
            group.start_soon(resumed_call, handle)
            released = await server.call_tool("release", {"tag": "h"}, call_id="call_release")
        started = await server.call_tool("times_run", {"label": "h"}, call_id="call_count")

    assert started.text == "1"  # the resumed call did not start the tool again
    assert released.text.startswith("released h")
    assert results == {"first": "released h", "resumed": "released h"}
    assert len(handles) == 1  # following a task records nothing new
