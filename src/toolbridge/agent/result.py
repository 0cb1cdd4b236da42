"""What a run produced: the answer, why it stopped, the transcript, the calls made and the tokens used."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator

from toolbridge.errors import ModelError, ModelErrorKind, ToolsNotSupportedError
from toolbridge.types import AssistantMessage, Message, RunToolMode, ToolCall, ToolResult, Usage

__all__ = ["RunResult", "StopReason", "ToolCallRecord"]

StopReason = Literal[
    "final_answer", "external_calls", "max_steps", "repeated_call", "cancelled", "model_error"
]
"""Why a run ended. Only `final_answer` means the model finished on its own; `external_calls` means it
is waiting for the results of calls to external tools (`RunResult.pending_calls`)."""


def _read_error(value: Any) -> ModelError | None:
    if value is None or isinstance(value, ModelError):
        return value
    if not isinstance(value, dict):
        raise ValueError("error must be a ModelError, or the JSON object a RunResult writes for one")
    kind = ToolsNotSupportedError if value.get("type") == "ToolsNotSupportedError" else ModelError
    retry_after = value.get("retry_after")
    error_kind = value.get("kind")
    return kind(
        str(value.get("message", "")),
        model=str(value.get("model", "")),
        status=value.get("status"),
        body=value.get("body"),
        code=value.get("code"),
        headers={"retry-after": str(retry_after)} if retry_after is not None else None,
        kind=error_kind if error_kind in get_args(ModelErrorKind) else None,
    )


def _write_error(error: ModelError | None) -> dict[str, Any] | None:
    if error is None:
        return None
    return {
        "type": type(error).__name__,
        "message": str(error),
        "model": error.model,
        "status": error.status,
        "code": error.code,
        "kind": error.kind,
        # Of the response headers only this one matters to a client; others (cookies) stay out.
        "retry_after": error.retry_after,
        "body": error.body,
    }


RunError = Annotated[
    ModelError | None, PlainValidator(_read_error), PlainSerializer(_write_error, when_used="json")
]
"""The exception itself in Python; in JSON an object with its type, message, model, status, code, kind,
retry_after (seconds) and body."""


class ToolCallRecord(BaseModel):
    """One call the model made during a run, and what came of it."""

    model_config = ConfigDict(frozen=True)

    step: int
    call: ToolCall
    result: ToolResult
    """The result as the model saw it (after truncation); `result.server` says who ran it."""
    approved: bool | None = None
    """None: no approval was needed. False: the user declined and the tool did not run."""
    ran: bool = True
    """False when the tool never ran: declined, cancelled, unparseable, or the run stopped first."""
    truncated_chars: int = 0
    """Characters cut from a result longer than the agent's `max_result_chars`."""


class RunResult(BaseModel):
    """The outcome of `Agent.run()`; also the payload of the stream's final event."""

    model_config = ConfigDict(frozen=True)

    output: str
    """The final answer; empty when the run stopped before the model gave one."""
    stop_reason: StopReason
    stop_detail: str = ""
    """What happened, in a sentence for the user (e.g. which call repeated, the model's error)."""
    error: RunError = None
    """For `model_error`: the `ModelError` as raised, with its HTTP status, code, headers and body."""
    messages: list[Message] = Field(default_factory=list)
    """The whole conversation without the system prompt: the history passed in, the new prompt and
    everything the run added. Pass it as `history=` to continue the conversation."""
    new_message_index: int = 0
    """Where this run's messages start in `messages` (its user prompt)."""
    steps: int = 0
    """Model requests made."""
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    """Summed over the run's model requests. A reply closed early (after its calls) reports none."""
    tool_mode: RunToolMode = "none"
    """How tools were offered at the end of the run (`none`: the agent had no tools)."""
    pending_calls: list[ToolCall] = Field(default_factory=list)
    """For `external_calls`: the calls to external tools the run stopped for, under the names the caller
    gave those tools. `messages` ends with them unanswered: append a `ToolMessage` per call and pass the
    whole as `history=` (with no prompt) to resume the run."""

    @property
    def new_messages(self) -> list[Message]:
        return self.messages[self.new_message_index :]

    @property
    def last_reply(self) -> AssistantMessage | None:
        for message in reversed(self.messages):
            if isinstance(message, AssistantMessage):
                return message
        return None
