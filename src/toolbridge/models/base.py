"""The one interface every model provider implements, and the events a model stream yields.

A provider turns our neutral messages and tool specs into its wire format, streams the reply back as
`ModelEvent`s, and maps its errors onto `ModelError`. Nothing outside its adapter sees the wire format.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from toolbridge._values import readable_text
from toolbridge.types import Message, ToolMode, ToolModeSetting, ToolSearchSetting, ToolSpec, Usage

__all__ = [
    "Finish",
    "InvalidToolCall",
    "Model",
    "ModelEvent",
    "ModelRequest",
    "ModelSettings",
    "NamedTool",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallDelta",
    "ToolModeChanged",
    "UsageReport",
    "event_stream",
]


@dataclass(frozen=True)
class TextDelta:
    text: str

    def __post_init__(self) -> None:
        # Where a model's text becomes ours: a lone surrogate would break every encoder after this.
        object.__setattr__(self, "text", readable_text(self.text))


@dataclass(frozen=True)
class ReasoningDelta:
    text: str

    def __post_init__(self) -> None:
        # Where a model's text becomes ours: a lone surrogate would break every encoder after this.
        object.__setattr__(self, "text", readable_text(self.text))


@dataclass(frozen=True)
class ToolCallDelta:
    """A piece of a tool call. Pieces with the same `index` belong to one call; `arguments` pieces join
    into the JSON text of its arguments. Calls a model wrote in its text come as one complete piece."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    source: str | None = None
    """Where the model said the tool lives (only calls written in text can say so)."""


@dataclass(frozen=True)
class InvalidToolCall:
    """Text that looked like a tool call but could not be read. It has no id, so it is no call."""

    message: str
    """What was wrong, for people."""
    raw: str
    """The text as the model wrote it."""
    feedback: str
    """What to tell the model, in the words of the dialect it was asked to write calls in."""


@dataclass(frozen=True)
class ToolModeChanged:
    """The endpoint rejected native tools: from this request on, tools are described in the prompt."""

    tool_mode: ToolMode
    reason: str


@dataclass(frozen=True)
class Finish:
    reason: str
    """`stop`, `tool_calls`, `length`, or whatever the provider reported."""
    closed_early: bool = False
    """The stream was closed after complete calls, before the model finished writing."""


@dataclass(frozen=True)
class UsageReport:
    usage: Usage


ModelEvent = (
    TextDelta | ReasoningDelta | ToolCallDelta | InvalidToolCall | ToolModeChanged | Finish | UsageReport
)


@dataclass(frozen=True)
class NamedTool:
    """A `tool_choice` naming the one tool the reply must call."""

    name: str


@dataclass(frozen=True)
class ModelSettings:
    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: Literal["required"] | NamedTool | None = None
    """"required": the reply must call one of the request's tools; a `NamedTool`: it must call that
    one. The API enforces it where it can; a model given its tools in the prompt is told so in the
    prompt. None: the model decides."""
    parallel_tool_calls: bool | None = None
    """False: at most one call per reply, where the API takes that. None: the API's default."""
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    user: str | None = None
    """The end user, for the provider's abuse monitoring."""
    response_format: dict[str, Any] | None = None
    """OpenAI's `response_format` (`json_object`, `json_schema`), sent as given where the API takes it."""


@dataclass(frozen=True)
class ModelRequest:
    messages: Sequence[Message]
    tools: Sequence[ToolSpec] = ()
    """Tools offered through the API's function calling; empty in prompt mode."""
    settings: ModelSettings = field(default_factory=ModelSettings)


class Model(ABC):
    """A chat model that streams. One instance per configured model; safe to share between agents."""

    name: str
    """How the user named it (`gpt-4o`, `ollama:qwen3`, `demo`)."""
    tool_mode: ToolModeSetting = "auto"
    tool_search: ToolSearchSetting | None = None
    """Whether runs on it offer `search_tools` in place of many tools; None: the agent's choice, else auto."""
    dialect: str | None = None
    """The tool-call dialect it writes in text (`toolbridge parse --formats`); None: its model profile's."""
    reasoning_open: bool | None = None
    """Whether its text may start inside reasoning opened by the prompt (a hint the output decides);
    None: its model profile's."""
    model_id: str = ""
    """The provider's id of the model, looked up in the model profiles; empty: the name is used."""
    settings: ModelSettings = ModelSettings()
    """Its defaults (from its config), which a request's own settings override."""

    @abstractmethod
    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        """Open a streamed reply. Leaving the context closes the stream, also before it ended: that is
        how the agent stops paying for text a model writes after its tool calls."""

    async def aclose(self) -> None:  # noqa: B027 - a default for adapters that hold nothing
        """Release what the model holds on the running event loop (HTTP clients). Safe to call twice."""


@asynccontextmanager
async def event_stream(events: AsyncGenerator[ModelEvent]) -> AsyncIterator[AsyncIterator[ModelEvent]]:
    """`events` as `Model.stream` returns them: leaving the context closes the generator, also early."""
    try:
        yield events
    finally:
        await events.aclose()
