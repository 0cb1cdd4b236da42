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


class CuttableProxy:
    """A TCP proxy in front of an HTTP server that a test can cut: every open connection is closed, as
    when a network drops under a call (new connections go through again)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self._open: list[anyio.CancelScope] = []

    async def serve(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        task_status.started()
        await listener.serve(self._handle)

    def cut(self) -> None:
        for connection in self._open:
            connection.cancel()
        self._open.clear()

    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        async with client, await anyio.connect_tcp("127.0.0.1", self.upstream_port) as server:

            async def pipe(source: anyio.abc.SocketStream, sink: anyio.abc.SocketStream) -> None:
                try:
                    async for chunk in source:
                        await sink.send(chunk)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass
                group.cancel_scope.cancel()

            async with anyio.create_task_group() as group:
                self._open.append(group.cancel_scope)
                group.start_soon(pipe, client, server)
                group.start_soon(pipe, server, client)


@pytest.mark.slow
async def test_a_session_lost_mid_task_resumes_the_same_task_on_the_next(
    http_server: Callable[..., Any],
) -> None:
    upstream = http_server("tasks_server", "streamable-http")
    proxy = CuttableProxy(upstream.port)
    cut_once = anyio.Event()

    async def on_progress(progress: ToolProgress) -> None:
        if not cut_once.is_set():
            cut_once.set()
            proxy.cut()

    async with anyio.create_task_group() as group:
        await group.start(proxy.serve)
        config = ServerConfig(
            name="tasks", transport="streamable-http", url=f"http://127.0.0.1:{proxy.port}/mcp"
        )
        async with ServerConnection(config) as server:
            result = await server.call_tool(
                "slow_compute",
                {"seconds": 0.6, "label": "resumed", "steps": 3},
                call_id="r",
                on_progress=on_progress,
            )
            started = await server.call_tool("times_run", {"label": "resumed"}, call_id="n")
        group.cancel_scope.cancel()

    assert cut_once.is_set()
    assert (result.is_error, result.text) == (False, "computed resumed")
    assert started.text == "1"


async def test_a_task_past_the_calls_timeout_is_a_timeout_and_cancelled_at_the_server(
    tasks_config: ServerConfig,
) -> None:
    # One connection (over stdio another would be another server); its timeout bounds the question too.
    async with ServerConnection(tasks_config.model_copy(update={"timeout": 1.0})) as server:
        result = await server.call_tool("hold", {"tag": "late"}, call_id="l")
        seen = await server.call_tool("was_cancelled", {"tag": "late", "wait_ms": 800}, call_id="w")

    assert (result.is_error, result.error_kind) == (True, "timeout")
    assert seen.text == "true"


async def test_an_input_request_nobody_can_answer_fails_the_call_and_cancels_the_task(
    tasks_config: ServerConfig,
) -> None:
    async with ServerConnection(tasks_config) as server:  # no elicitation feature
        result = await server.call_tool("confirm_delete", {"filename": "b.txt"}, call_id="d")
        seen = await server.call_tool("was_cancelled", {"tag": "b.txt"}, call_id="w")

    assert result.is_error
    assert "Elicitation not supported" in result.text
    assert seen.text == "true"
