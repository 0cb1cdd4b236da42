"""For the gateway's tasks tests: the gateway in process with its task settings chosen, and a downstream
client that declares the tasks extension and keeps the task handles it gets (instead of following them).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mcp
from _gateway import SHUTDOWN_GRACE, InProcessGateway, our_server, write_config
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.shared.memory import create_client_server_memory_streams
from pydantic import ConfigDict

from toolbridge.config import load_config
from toolbridge.gateway import GatewaySetup
from toolbridge.mcp.tasks import (
    TASKS_EXTENSION,
    TaskCreated,
    _CancelTask,
    _GetTask,
    _TaskAnswers,
    _TaskRef,
    _UpdateTask,
)
from toolbridge.store import CallLog, Store

TERMINAL = {"completed", "failed", "cancelled"}


class Seen(mcp.Result):
    """A `tasks/get` answer as it came, every field kept."""

    model_config = ConfigDict(extra="allow")

    def field(self, name: str) -> Any:
        return (self.model_extra or {}).get(name)


class KeepsTasks(ClientExtension):
    """Declares the extension; a task handle the gateway answers with is kept in `created`."""

    identifier = TASKS_EXTENSION

    def __init__(self) -> None:
        self.created: list[TaskCreated] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskCreated, resolve=self._keep)]

    async def _keep(self, created: TaskCreated, ctx: ClaimContext) -> mcp.CallToolResult:
        self.created.append(created)
        # An error result: the SDK checks no output schema on it.
        return mcp.CallToolResult(content=[mcp.TextContent(text=f"task {created.task_id}")], is_error=True)


async def get(session: ClientSession, task_id: str) -> Seen:
    return await session.send_request(_GetTask(params=_TaskRef(task_id=task_id)), Seen)


async def until(session: ClientSession, task_id: str, *statuses: str) -> Seen:
    """Poll the task (at its own poll interval) until it has one of `statuses` or has ended."""
    while True:
        seen = await get(session, task_id)
        if seen.field("status") in {*statuses, *TERMINAL}:
            return seen
        await anyio.sleep((seen.field("pollIntervalMs") or 50) / 1000)


async def update(session: ClientSession, task_id: str, answers: dict[str, Any]) -> None:
    params = _TaskAnswers(task_id=task_id, input_responses=answers)
    await session.send_request(_UpdateTask(params=params), mcp.EmptyResult)


async def cancel(session: ClientSession, task_id: str) -> None:
    await session.send_request(_CancelTask(params=_TaskRef(task_id=task_id)), mcp.EmptyResult)


def result_text(seen: Seen) -> str:
    result = seen.field("result") or {}
    return " ".join(block.get("text", "") for block in result.get("content", []))


class TasksGateway(InProcessGateway):
    """The in-process gateway with its tasks settings (`task_after`, `max_tasks`, `keep_seconds`) set."""

    def __init__(
        self,
        tmp_path: Path,
        servers: dict[str, dict[str, Any]],
        config: dict[str, Any] | None = None,
        **settings: float,
    ) -> None:
        setup = GatewaySetup.of(load_config(write_config(tmp_path, servers, **(config or {}))), None)
        super().__init__(setup, tmp_path / "calls.db")
        self.settings = settings
        self.served: Any = None

    @asynccontextmanager
    async def _serve(self) -> AsyncIterator[Any]:
        with Store(f"sqlite:///{self.db}") as store:
            served = self.setup.build(call_log=CallLog(store.log_tool_calls))
            for name, value in self.settings.items():
                setattr(served.tasks, name, value)
            self.served = served
            async with (
                served.toolbox,
                create_client_server_memory_streams() as (client_streams, server_streams),
                anyio.create_task_group() as serving,
            ):
                serving.start_soon(served.serve_one_client, *server_streams)
                try:
                    yield client_streams
                finally:
                    await client_streams[1].aclose()
                    serving.cancel_scope.deadline = anyio.current_time() + SHUTDOWN_GRACE


def tasks_gateway(tmp_path: Path, config: dict[str, Any] | None = None, **settings: float) -> TasksGateway:
    """The gateway in front of tests/servers/tasks_server.py (stdio) and asks_client.py."""
    servers = {"tasks": our_server("tasks_server"), "asks": our_server("asks_client")}
    return TasksGateway(tmp_path, servers, config, **settings)
