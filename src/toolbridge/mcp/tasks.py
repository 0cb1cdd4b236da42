"""Tool calls a server runs as tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663).

On the 2026-07-28 revision a server may answer `tools/call` with `resultType: "task"` and a task handle
instead of the result. toolbridge declares the extension (`TasksExtension`, passed to the SDK's
`Client`), and its claim follows the task to its end: `tasks/get` at the server's poll interval, each
new status message handed on as progress, input requests inside the task answered through the
client's own sampling / elicitation / roots callbacks and sent back with `tasks/update`, the final
result returned as the call's result. A call cancelled while it waits (Ctrl-C, stop on the page, a run
cancelled) sends `tasks/cancel`. A session lost while following keeps the task id (`TaskWatch`) so the
call resumes on the next session instead of starting the tool again.

Under `toolbridge serve` a run stores each task it starts (`record_tasks`: a `TaskHandle` per
task), so that when its replica dies another one follows the task instead (`resuming_tasks`: a call
whose id has a handle there is not sent, its task is followed). A replica that lived on, stalled, while
its run was taken over stops following without cancelling the task (`hand_over`).
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import mcp_types as mcp
from mcp import ClientSession, MCPError
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext
from mcp.shared.dispatcher import ProgressFnT
from pydantic import TypeAdapter

from toolbridge.mcp.calls_in_flight import making_call

__all__ = [
    "TASKS_EXTENSION",
    "TaskHandle",
    "TaskWatch",
    "TasksExtension",
    "follow_task",
    "hand_over",
    "handing_over_tasks",
    "record_tasks",
    "resuming_tasks",
    "task_to_resume",
    "watching_tasks",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
DEFAULT_POLL_MS = 500
"""How often to ask when the server suggests nothing."""
MIN_POLL_MS = 10
"""A floor, so a server suggesting 0 cannot make us spin."""
CANCEL_WAIT = 5.0
"""Seconds a `tasks/cancel` may take when a call is stopped (the stop itself does not wait longer)."""
_TERMINAL = frozenset({"completed", "failed", "cancelled"})


class TaskCreated(mcp.Result):
    """The server's answer to a `tools/call` it runs as a task (SEP-2663 `CreateTaskResult`)."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None


class DetailedTask(mcp.Result):
    """What `tasks/get` says of a task: its status, and its result, error or input requests."""

    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] | None = None


class _TaskRef(mcp.RequestParams):
    task_id: str


class _TaskAnswers(mcp.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class _GetTask(mcp.Request[_TaskRef, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"  # SEP-2663: tasks/* carry `Mcp-Name: <taskId>`


class _UpdateTask(mcp.Request[_TaskAnswers, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class _CancelTask(mcp.Request[_TaskRef, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


_INPUT_REQUEST: TypeAdapter[mcp.InputRequest] = TypeAdapter(mcp.InputRequest)


@dataclass
class TaskWatch:
    """One tool call's task, while it is followed: where its status messages go, and its id once the
    server made one (kept by the caller to resume after a lost session)."""

    on_progress: ProgressFnT | None = None
    task_id: str | None = None
    poll_ms: int | None = None


_WATCH: contextvars.ContextVar[TaskWatch | None] = contextvars.ContextVar(
    "toolbridge_task_watch", default=None
)


@dataclass(frozen=True)
class TaskHandle:
    """What it takes to follow a call's task from anywhere: the server holding it, the agent's call id,
    the tool (as the server knows it), the task's id and the poll interval the server suggested."""

    server: str
    call_id: str
    tool: str
    task_id: str
    poll_ms: int | None = None


_RECORD: contextvars.ContextVar[Callable[[TaskHandle], None] | None] = contextvars.ContextVar(
    "toolbridge_task_record", default=None
)
_RESUMING: contextvars.ContextVar[Mapping[str, TaskHandle]] = contextvars.ContextVar(
    "toolbridge_tasks_resuming",
    default={},  # noqa: B039 - never mutated
)


def record_tasks(record: Callable[[TaskHandle], None]) -> None:
    """From now on in the current task (a run's own), and the tasks it starts, each task a server makes
    of a call is handed to `record` as it starts."""
    _RECORD.set(record)


@contextmanager
def resuming_tasks(handles: Iterable[TaskHandle]) -> Iterator[None]:
    """While inside, a call whose id has one of `handles` follows that task instead of being sent."""
    token = _RESUMING.set({handle.call_id: handle for handle in handles})
    try:
        yield
    finally:
        _RESUMING.reset(token)


_HANDED_OVER: set[str] = set()


def hand_over(task_ids: Iterable[str]) -> None:
    """Tasks another process follows from now on (it took their run over): the calls here following
    them are about to be stopped, and must not cancel them at their servers."""
    _HANDED_OVER.update(task_ids)


def task_to_resume(call_id: str) -> TaskWatch | None:
    """The task to follow for call `call_id` inside `resuming_tasks`; None: send the call."""
    handle = _RESUMING.get().get(call_id)
    return TaskWatch(task_id=handle.task_id, poll_ms=handle.poll_ms) if handle is not None else None


@contextmanager
def watching_tasks(on_progress: ProgressFnT | None) -> Iterator[TaskWatch]:
    """Around one tool call: a task the server makes of it is recorded in the `TaskWatch` yielded."""
    watch = TaskWatch(on_progress)
    token = _WATCH.set(watch)
    try:
        yield watch
    finally:
        _WATCH.reset(token)


TaskHandOver = Callable[[TaskCreated, ClaimContext], Awaitable[mcp.CallToolResult]]
_HAND_OVER: contextvars.ContextVar[TaskHandOver | None] = contextvars.ContextVar(
    "toolbridge_task_hand_over", default=None
)


@contextmanager
def handing_over_tasks(hand_over: TaskHandOver) -> Iterator[None]:
    """Around one tool call: a task the server makes of it goes to `hand_over` (the gateway passes it on
    to its own client), whose result stands for the call's, instead of being followed here."""
    token = _HAND_OVER.set(hand_over)
    try:
        yield
    finally:
        _HAND_OVER.reset(token)


async def _resolve(created: TaskCreated, ctx: ClaimContext) -> mcp.CallToolResult:
    hand_over = _HAND_OVER.get()
    if hand_over is not None:
        return await hand_over(created, ctx)
    watch = _WATCH.get() or TaskWatch()
    watch.task_id, watch.poll_ms = created.task_id, created.poll_interval_ms
    record, call = _RECORD.get(), making_call()
    if record is not None and call is not None:
        record(
            TaskHandle(call.server, call.call_id, ctx.tool_name, created.task_id, created.poll_interval_ms)
        )
    return await follow_task(
        ctx.session, watch, timeout=ctx.read_timeout_seconds, first_message=created.status_message
    )


async def follow_task(
    session: ClientSession, watch: TaskWatch, *, timeout: float | None, first_message: str | None = None
) -> mcp.CallToolResult:
    """Poll `watch`'s task until it ends and return its result. A cancelled caller cancels the task;
    so does `timeout` (seconds for the whole task, as for a call that is not one), then raising the
    SDK's request timeout."""
    assert watch.task_id is not None
    with anyio.move_on_after(math.inf if timeout is None else timeout) as limit:
        return await _poll(session, watch, first_message)
    assert limit.cancelled_caught
    raise MCPError(mcp.REQUEST_TIMEOUT, f"the task {watch.task_id!r} did not end within {timeout:g} s")


async def _poll(session: ClientSession, watch: TaskWatch, first_message: str | None) -> mcp.CallToolResult:
    assert watch.task_id is not None
    task_id = watch.task_id
    reported = 0
    last_message: str | None = None

    async def report(message: str | None) -> None:
        nonlocal reported, last_message
        if message is None or message == last_message or watch.on_progress is None:
            return
        last_message, reported = message, reported + 1
        await watch.on_progress(float(reported), None, message)

    try:
        await report(first_message)
        while True:
            task = await session.send_request(_GetTask(params=_TaskRef(task_id=task_id)), DetailedTask)
            await report(task.status_message)
            if task.poll_interval_ms is not None:
                watch.poll_ms = task.poll_interval_ms
            if task.status in _TERMINAL:
                return _outcome(task)
            if task.status == "input_required" and task.input_requests:
                await _answer(session, task_id, task.input_requests)
                continue
            await anyio.sleep(max(MIN_POLL_MS, watch.poll_ms or DEFAULT_POLL_MS) / 1000)
    except anyio.get_cancelled_exc_class():
        if task_id in _HANDED_OVER:  # another process follows it now: only this one stops
            _HANDED_OVER.discard(task_id)
            raise
        with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_WAIT):
            await cancel_task(session, task_id)
        raise


async def cancel_task(session: ClientSession, task_id: str) -> None:
    """Ask the server to cancel a task; a server that cannot is not an error of the caller's."""
    with suppress(MCPError):
        await session.send_request(_CancelTask(params=_TaskRef(task_id=task_id)), mcp.EmptyResult)


async def _answer(session: ClientSession, task_id: str, requests: dict[str, dict[str, Any]]) -> None:
    """Answer a task's input requests through the client's callbacks, as any server request."""
    answers: dict[str, Any] = {}
    for key, raw in requests.items():
        request = _INPUT_REQUEST.validate_python(raw)
        meta = request.params.meta if request.params else None
        ctx = ClientRequestContext(session=session, request_id=key, meta=meta)
        response = await session.dispatch_input_request(ctx, request)
        if isinstance(response, mcp.ErrorData):
            # Nothing to answer with: the task would wait for ever, so it is cancelled.
            await cancel_task(session, task_id)
            raise MCPError.from_error_data(response)
        answers[key] = response.model_dump(by_alias=True, mode="json", exclude_none=True)
    await session.send_request(
        _UpdateTask(params=_TaskAnswers(task_id=task_id, input_responses=answers)), mcp.EmptyResult
    )


def _outcome(task: DetailedTask) -> mcp.CallToolResult:
    if task.status == "completed" and task.result is not None:
        return mcp.CallToolResult.model_validate(task.result)
    if task.status == "failed" and task.error is not None:
        raise MCPError.from_error_data(mcp.ErrorData.model_validate(task.error))
    why = task.status_message or ("cancelled by the server" if task.status == "cancelled" else task.status)
    return mcp.CallToolResult(
        content=[mcp.TextContent(text=f"The task ended without a result: {why}.")], is_error=True
    )


class TasksExtension(ClientExtension):
    """Declares the tasks extension and follows each task a server makes of a tool call."""

    identifier = TASKS_EXTENSION

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=TaskCreated, resolve=_resolve)]
