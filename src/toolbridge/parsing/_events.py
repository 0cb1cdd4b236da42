"""What the parser reports: stream events, the calls it found, and the merged result of a whole output."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from toolbridge.types import ToolCall

__all__ = [
    "Event",
    "ParseError",
    "ParseResult",
    "ParsedToolCall",
    "ReasoningDelta",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallEnd",
    "ToolCallStart",
]


@dataclass(frozen=True, slots=True)
class ParsedToolCall:
    """A call exactly as the model wrote it. No id is invented here, so parsing stays deterministic."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    source: str | None = None
    format: str = ""
    """The format module that recognised the call (`hermes`, `fenced`, ...)."""

    def to_tool_call(self) -> ToolCall:
        """The neutral `ToolCall`; it gets a fresh id when the model gave none."""
        if self.id is None:
            return ToolCall(name=self.name, arguments=self.arguments, source=self.source)
        return ToolCall(name=self.name, arguments=self.arguments, id=self.id, source=self.source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "arguments": self.arguments,
            "id": self.id,
            "source": self.source,
            "format": self.format,
        }


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Content for the user. Never contains reasoning or any part of a tool call's markup."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """Text from inside `<think>...</think>`."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A call has begun, sent as soon as its name is known. `ToolCallEnd` or `ParseError` follows."""

    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgumentsDelta:
    """Raw text of the arguments as the model writes it, for showing progress.

    `ToolCallEnd.call.arguments` is the authoritative, decoded (and possibly repaired) value.
    """

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    """A call is complete: sent on the feed that delivers its closing marker, so the caller may stop there."""

    call: ParsedToolCall


@dataclass(frozen=True, slots=True)
class ParseError:
    """Something looked like a tool call but could not be read; `raw` is its text, to show the model."""

    message: str
    raw: str
    cut_off: bool = False
    """The output ended (token limit) inside the call: nothing was wrong with it but its length."""


Event = TextDelta | ReasoningDelta | ToolCallStart | ToolCallArgumentsDelta | ToolCallEnd | ParseError


@dataclass(frozen=True, slots=True)
class ParseResult:
    """Everything found in one model output."""

    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ParsedToolCall, ...] = ()
    errors: tuple[ParseError, ...] = ()

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> ParseResult:
        content: list[str] = []
        reasoning: list[str] = []
        calls: list[ParsedToolCall] = []
        errors: list[ParseError] = []
        for event in events:
            if isinstance(event, TextDelta):
                content.append(event.text)
            elif isinstance(event, ReasoningDelta):
                reasoning.append(event.text)
            elif isinstance(event, ToolCallEnd):
                calls.append(event.call)
            elif isinstance(event, ParseError):
                errors.append(event)
        return cls("".join(content), "".join(reasoning), tuple(calls), tuple(errors))

    def to_dict(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "reasoning": self.reasoning,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "errors": [{"message": e.message, "raw": e.raw} for e in self.errors],
        }
