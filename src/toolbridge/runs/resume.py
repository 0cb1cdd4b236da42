"""Following the tasks of a run taken over from a replica that died (`toolbridge.runs.takeover`): each
unanswered call that had become a task is made again on its server's connection inside
`resuming_tasks`, so it follows its task there instead of starting the tool a second time (straight to
the server the handle names: the call was resolved, approved and checked when it was first made). Its
progress and end are the run's events as for any call; its result becomes the call's tool message.

When the task's server cannot be reached any more, the result is lost with it: the call gets an error
result (stored: the transcript stays well-formed) and the run ends `failed` with a `run_error` event
(`ResumeError`) that names the server, the tool and the task; the model is not asked again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import anyio

from toolbridge.agent import AgentDefinition, MessageAddedEvent, ToolCallFinishedEvent, ToolCallProgressEvent
from toolbridge.agent.events import preview
from toolbridge.errors import ToolbridgeError
from toolbridge.mcp import ProgressHandler, ServerPool, ToolProgress
from toolbridge.mcp.tasks import TaskHandle, resuming_tasks
from toolbridge.runs.takeover import TakenRun
from toolbridge.tools.sources import error_kind
from toolbridge.types import AssistantMessage, Message, ToolCall, ToolMessage, ToolResult

if TYPE_CHECKING:
    from toolbridge.runs.channels import Channel
    from toolbridge.store.store import Store

__all__ = ["ResumeError", "follow_tasks", "resume_turn", "tasks_to_follow"]

Publish = Callable[[str], None]
CANCELLED = "The call was cancelled."


class ResumeError(Exception):
    """A taken-over run cannot go on: the server holding its task is gone."""


async def resume_turn(
    store: Store, pool: ServerPool | None, definition: AgentDefinition, taken: TakenRun, channel: Channel
) -> list[Message]:
    """Follow a taken-over run's tasks, store their results (each with its `message_added` event) and
    return the chat's messages the agent's turn continues from. Raises `ResumeError` (once the results
    are stored) when a task's server is gone. The run cancelled meanwhile (`channel.cancel()`) stops
    following: the tasks are cancelled at their servers, their calls get cancelled results."""
    publish = channel.publish
    # As stored, not `get_history`: that answers the calls the dead replica left unanswered.
    history = await anyio.to_thread.run_sync(store.get_messages, taken.chat_id)
    waiting = tasks_to_follow(history, taken.tasks)
    channel.following = stop = anyio.CancelScope()
    if channel.cancel_pending:
        stop.cancel()
    results, lost = await follow_tasks(pool, definition, waiting, publish, stop)
    channel.following = None
    if channel.lost:  # another replica took the run over meanwhile: the results are its to store
        return history
    for message in results:
        await anyio.to_thread.run_sync(store.append_message, taken.chat_id, message)
        publish(MessageAddedEvent(step=0, index=len(history), message=message).model_dump_json())
        history.append(message)
    if lost is not None:
        raise lost
    return history


def tasks_to_follow(
    history: Sequence[Message], tasks: Sequence[TaskHandle]
) -> list[tuple[ToolCall, TaskHandle]]:
    """The `tasks` whose call is in the stored history without a result yet, with that call (a result
    stored just before the replica died is not fetched twice)."""
    calls = {call.id: call for m in history if isinstance(m, AssistantMessage) for call in m.tool_calls}
    answered = {m.result.call_id for m in history if isinstance(m, ToolMessage)}
    return [(calls[t.call_id], t) for t in tasks if t.call_id in calls and t.call_id not in answered]


async def follow_tasks(
    pool: ServerPool | None,
    definition: AgentDefinition,
    waiting: Sequence[tuple[ToolCall, TaskHandle]],
    publish: Publish,
    stop: anyio.CancelScope,
) -> tuple[list[ToolMessage], ResumeError | None]:
    """Follow each task to its end, concurrently, until `stop` is cancelled: the calls' tool messages,
    in call order, and the `ResumeError` that ends the run when a task's server could not be reached."""
    results: dict[str, ToolResult] = {}

    async def follow(call: ToolCall, task: TaskHandle) -> None:
        report = _progress(call, task.server, publish)
        started = time.perf_counter()
        try:
            if pool is None:
                raise ToolbridgeError("this server has no MCP servers configured")
            with resuming_tasks([task]):
                results[call.id] = await pool.call_tool(
                    task.server,
                    task.tool,
                    call.arguments,
                    call_id=call.id,
                    timeout=definition.call_timeout,
                    on_progress=report,
                )
        except ToolbridgeError as error:
            duration = time.perf_counter() - started
            kind = error_kind(error)
            results[call.id] = ToolResult.error(
                call.id, str(error), kind=kind, server=task.server, duration=duration
            )

    with stop:
        async with anyio.create_task_group() as group:
            for call, task in waiting:
                group.start_soon(follow, call, task)
    for call, task in waiting:  # a call whose following `stop` cut short (its task is cancelled too)
        if call.id not in results:
            results[call.id] = ToolResult.error(call.id, CANCELLED, kind="cancelled", server=task.server)
    messages: list[ToolMessage] = []
    lost: list[str] = []
    for call, task in waiting:
        result, cut = results[call.id].truncated(definition.max_result_chars)
        publish(
            ToolCallFinishedEvent(
                step=0,
                call_id=call.id,
                name=call.name,
                is_error=result.is_error,
                error_kind=result.error_kind,
                result_preview=preview(result.text),
                duration=result.duration,
                server=result.server,
                truncated_chars=cut,
            ).model_dump_json()
        )
        messages.append(ToolMessage(name=call.name, result=result))
        if result.error_kind == "server_unavailable":
            lost.append(
                f"task {task.task_id!r} of the call to {call.name!r} on server {task.server!r} could not "
                f"be followed ({result.text})"
            )
    if not lost:
        return messages, None
    return messages, ResumeError(
        "the server running this run stopped while a tool ran as a task, and the task's result is "
        f"lost: {'; '.join(lost)}. Ask again once the server is back."
    )


def _progress(call: ToolCall, server: str, publish: Publish) -> ProgressHandler:
    async def report(progress: ToolProgress) -> None:
        event = ToolCallProgressEvent.of(0, call, server, progress)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            publish(event.model_dump_json())

    return report
