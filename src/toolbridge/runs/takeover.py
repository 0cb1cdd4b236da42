"""A run whose replica died while a tool call ran as a task (`toolbridge.mcp.tasks`) is taken over by
another replica, not ended `interrupted`: the task goes on at its server, so its result is not lost.

The run's events say which tasks it waits for: a `task_started` event (the server, the call, the tool,
the task id) when a server makes a task of a call, and the call's result stored (`message_added` of
its tool message) when it ends. `unfinished_tasks` reads them; `RunLedger.take_over_tasks` hands each
such run to the replica asking, which follows the tasks and continues the run's agent turn
(`toolbridge.server.web.chats`). A run waiting for no task still ends `interrupted`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from toolbridge.mcp.tasks import TaskHandle

__all__ = ["TASK_STARTED", "TakenRun", "TaskStarts", "task_started_event", "unfinished_tasks"]

TASK_STARTED = "task_started"
RUN_RESUMED = "run_resumed"
RESUMED_MESSAGE = (
    "the server running it stopped while a tool ran as a task; this one follows the task and continues"
)


@dataclass(frozen=True)
class TakenRun:
    """A run this replica took over: its tasks to follow, then its agent turn to continue."""

    run_id: str
    chat_id: int
    tasks: tuple[TaskHandle, ...]


def task_started_event(run_id: str, handle: TaskHandle) -> str:
    """The run event that stores a task's handle with its run."""
    return json.dumps(
        {
            "type": TASK_STARTED,
            "run_id": run_id,
            "server": handle.server,
            "call_id": handle.call_id,
            "tool": handle.tool,
            "task_id": handle.task_id,
            "poll_ms": handle.poll_ms,
        }
    )


@dataclass
class TaskStarts:
    """A run's `task_started` events, each published only once its call's assistant message is stored.

    The tool runs (and its server makes the task) while the recorder still writes the message that
    asks for it; a replica taking the run over follows only the tasks of calls in the stored chat, so
    a `task_started` stored before its call would be taken over and then dropped, and the model asked
    again without the task's result."""

    run_id: str
    publish: Callable[[str], None]
    _stored: set[str] = field(default_factory=set)
    _held: dict[str, str] = field(default_factory=dict)

    def started(self, handle: TaskHandle) -> None:
        event = task_started_event(self.run_id, handle)
        if handle.call_id in self._stored:
            self.publish(event)
        else:
            self._held[handle.call_id] = event

    def calls_stored(self, call_ids: Iterable[str]) -> None:
        """The message asking for these calls is stored (and its `message_added` event published)."""
        for call_id in call_ids:
            self._stored.add(call_id)
            held = self._held.pop(call_id, None)
            if held is not None:
                self.publish(held)


def run_resumed_event(run_id: str, replica: str, tasks: Iterable[TaskHandle]) -> str:
    return json.dumps(
        {
            "type": RUN_RESUMED,
            "run_id": run_id,
            "replica": replica,
            "task_ids": [task.task_id for task in tasks],
            "message": RESUMED_MESSAGE,
        }
    )


def unfinished_tasks(events: Iterable[dict[str, Any]]) -> list[TaskHandle]:
    """The tasks a run's events (oldest first) started whose call's result was never stored."""
    started: dict[str, TaskHandle] = {}
    for event in events:
        kind = event.get("type")
        if kind == TASK_STARTED:
            handle = TaskHandle(
                server=event["server"],
                call_id=event["call_id"],
                tool=event["tool"],
                task_id=event["task_id"],
                poll_ms=event.get("poll_ms"),
            )
            started[handle.call_id] = handle
        elif kind == "message_added":
            message = event.get("message") or {}
            if message.get("role") == "tool":
                started.pop(str((message.get("result") or {}).get("call_id")), None)
    return list(started.values())
