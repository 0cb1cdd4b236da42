"""The OpenAI chat-completions wire shapes the endpoint reads and writes, and the conversions to ours.

An agent reads the messages (history and prompt, or results that resume a paused run), `stream`,
`temperature` and `max_tokens`; it brings its own tools and runs them server-side, and offers the
client's `tools` too (`mixed`). A pass-through request (`model` names a model) also reads the
client's `tools`, `tool_choice` and the sampling fields (see `passthrough_wire`). Fields nobody reads
are accepted and ignored.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from toolbridge.agent import AgentEvent, ToolCallFinishedEvent, ToolCallProgressEvent, ToolCallStartedEvent
from toolbridge.mcp.progress import progress_label

__all__ = ["ChatCompletionRequest", "CompletionIds", "activity_line"]


class WireFunction(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    arguments: str | dict[str, Any] | None = None
    """A JSON object as a string (OpenAI's shape); an object is read too."""


class WireToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    function: WireFunction


class WireMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[WireToolCall] | None = None
    tool_call_id: str | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class WireFunctionDefinition(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any] | None = None


class WireTool(BaseModel):
    """A tool the client offers (pass-through: the client runs it, toolbridge returns the calls)."""

    model_config = ConfigDict(extra="allow")

    type: Literal["function"] = "function"
    function: WireFunctionDefinition


class WireChosenFunction(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str = Field(min_length=1)


class WireNamedToolChoice(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: Literal["function"] = "function"
    function: WireChosenFunction


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(description="An agent to run, or a model to pass through (GET /v1/models lists both).")
    messages: list[WireMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    max_completion_tokens: int | None = Field(default=None, gt=0)
    # Read by the pass-through (`passthrough`):
    tools: list[WireTool] | None = None
    tool_choice: Literal["auto", "none", "required"] | WireNamedToolChoice | None = None
    parallel_tool_calls: bool | None = None
    top_p: float | None = Field(default=None, ge=0, le=1)
    stop: str | list[str] | None = None
    seed: int | None = None
    user: str | None = None
    response_format: dict[str, Any] | None = None


def activity_line(event: AgentEvent) -> str | None:
    """Tool activity as a line of reasoning text: `→ calculate {...}` when a call starts, `… calculate 40%
    reading` as its server reports progress, `✓`/`✗` when done."""
    if isinstance(event, ToolCallStartedEvent):
        return f"→ {event.call.name} {json.dumps(event.call.arguments, ensure_ascii=False)}\n"
    if isinstance(event, ToolCallProgressEvent):
        return f"… {event.name} {progress_label(event.progress, event.percent, event.message)}\n"
    if isinstance(event, ToolCallFinishedEvent):
        mark = "✗" if event.is_error else "✓"
        preview = " ".join(event.result_preview.split())
        return f"{mark} {event.name} {event.duration:.2f}s: {preview}\n"
    return None


class CompletionIds:
    """What every chunk and completion of one response repeats."""

    def __init__(self, model: str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex}"
        self.created = int(time.time())
        self.model = model

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }

    def usage_chunk(self, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [],
            "usage": usage,
        }

    def completion(
        self, message: dict[str, Any], finish_reason: str, usage: dict[str, int]
    ) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}],
            "usage": usage,
        }
