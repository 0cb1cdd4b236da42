"""What `Agent.stream()` yields: typed, JSON-serializable events for the CLI, the server and the web page.

Every event has a `type` discriminator and the `step` it belongs to (1-based; 0 for the final event):

```
step_started ─┬─ reasoning_delta* ─ text_delta* ─ step_finished
              └─ (tool_mode_changed: the step is redone in prompt mode)
per call:     tool_call_started ─ (approval_requested ─ approval_decided) ─ tool_call_progress* ─ tool_call_finished
message_added as each message of the transcript completes (the prompt, each reply, each result)
final         always last, carries the `RunResult`
```

`event.model_dump_json()` gives one JSON line; `parse_event(line)` reads it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from toolbridge.agent.result import RunResult
from toolbridge.types import Message, RunToolMode, ToolCall, ToolErrorKind, ToolMode, Usage

if TYPE_CHECKING:
    from toolbridge.mcp.progress import ToolProgress

__all__ = [
    "AgentEvent",
    "ApprovalDecidedEvent",
    "ApprovalRequestedEvent",
    "FinalEvent",
    "InvalidToolCallEvent",
    "MessageAddedEvent",
    "ReasoningDeltaEvent",
    "StepFinishedEvent",
    "StepStartedEvent",
    "TextDeltaEvent",
    "ToolCallFinishedEvent",
    "ToolCallProgressEvent",
    "ToolCallStartedEvent",
    "ToolModeChangedEvent",
    "parse_event",
]

PREVIEW_CHARS = 300


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    step: int


class StepStartedEvent(_Event):
    """A request to the model is about to be sent."""

    type: Literal["step_started"] = "step_started"
    tool_mode: RunToolMode


class TextDeltaEvent(_Event):
    """A piece of the answer, for the user. Never contains tool-call markup or reasoning."""

    type: Literal["text_delta"] = "text_delta"
    text: str


class ReasoningDeltaEvent(_Event):
    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


class ToolModeChangedEvent(_Event):
    """The endpoint rejected native tools: the step is redone with the tools in the prompt."""

    type: Literal["tool_mode_changed"] = "tool_mode_changed"
    tool_mode: ToolMode
    reason: str


class StepFinishedEvent(_Event):
    """The model's reply has been read (or cut off after its calls)."""

    type: Literal["step_finished"] = "step_finished"
    outcome: Literal["run_tools", "await_external", "final_answer", "stop"]
    finish_reason: str | None = None
    """As the provider reported it; None when the stream was closed early, after the calls."""
    closed_early: bool = False
    usage: Usage = Field(default_factory=Usage)


class ToolCallStartedEvent(_Event):
    """The model asked for a call; approval (if needed) and the call itself follow."""

    type: Literal["tool_call_started"] = "tool_call_started"
    call: ToolCall
    server: str | None = None
    """The server that has the tool (`native` for Python tools); None for a tool that does not exist."""


class ApprovalRequestedEvent(_Event):
    type: Literal["approval_requested"] = "approval_requested"
    call: ToolCall
    reason: str


class ApprovalDecidedEvent(_Event):
    type: Literal["approval_decided"] = "approval_decided"
    call_id: str
    approved: bool


class ToolCallProgressEvent(_Event):
    """The server reported progress on a running call (MCP `notifications/progress`)."""

    type: Literal["tool_call_progress"] = "tool_call_progress"
    call_id: str
    name: str
    server: str | None = None
    progress: float
    total: float | None = None
    message: str | None = None
    percent: int | None = None
    """Whole percent done, when the server gave a total."""

    @classmethod
    def of(
        cls, step: int, call: ToolCall, server: str | None, progress: ToolProgress
    ) -> ToolCallProgressEvent:
        """The event of `progress` reported on `call`, running on `server`."""
        return cls(
            step=step,
            call_id=call.id,
            name=call.name,
            server=server,
            progress=progress.progress,
            total=progress.total,
            message=progress.message,
            percent=progress.percent,
        )


class ToolCallFinishedEvent(_Event):
    type: Literal["tool_call_finished"] = "tool_call_finished"
    call_id: str
    name: str
    is_error: bool
    error_kind: ToolErrorKind | None = None
    """Why it failed (`denied`: declined; `timeout`, `invalid_arguments`, ...), for showing it without
    reading the message."""
    result_preview: str
    """The start of the result as the model sees it (at most a few hundred characters)."""
    duration: float
    """Seconds the tool took (0 when it never ran)."""
    server: str | None = None
    truncated_chars: int = 0
    cached: bool = False
    """The result came from the result cache; the tool did not run again."""


class MessageAddedEvent(_Event):
    """A message of the transcript is complete: store it now, and nothing completed is ever lost."""

    type: Literal["message_added"] = "message_added"
    index: int
    """Its position in `RunResult.messages` (the history passed in comes first)."""
    message: Message


class InvalidToolCallEvent(_Event):
    """The model wrote something that looked like a call but could not be read; it is told why."""

    type: Literal["invalid_tool_call"] = "invalid_tool_call"
    message: str
    raw: str


class FinalEvent(_Event):
    type: Literal["final"] = "final"
    step: int = 0
    result: RunResult


AgentEvent = Annotated[
    StepStartedEvent
    | TextDeltaEvent
    | ReasoningDeltaEvent
    | ToolModeChangedEvent
    | StepFinishedEvent
    | ToolCallStartedEvent
    | ApprovalRequestedEvent
    | ApprovalDecidedEvent
    | ToolCallProgressEvent
    | ToolCallFinishedEvent
    | InvalidToolCallEvent
    | MessageAddedEvent
    | FinalEvent,
    Field(discriminator="type"),
]

_EVENT_ADAPTER: TypeAdapter[AgentEvent] = TypeAdapter(AgentEvent)


def parse_event(data: str | bytes) -> AgentEvent:
    """Read back an event written with `model_dump_json()`."""
    return _EVENT_ADAPTER.validate_json(data)


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
