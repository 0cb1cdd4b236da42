"""The interface every call format (dialect) implements: how to write a call, the markers that open
one, and a reader for its body.

A new format (Qwen3 XML, Llama 3 JSON, Mistral `[TOOL_CALLS]`, ...) is one module with a `CallFormat`
subclass and one entry in `_registry.py`; the stream parser itself does not change.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from toolbridge.parsing._calls import CallProblem
from toolbridge.parsing._events import (
    Event,
    ParsedToolCall,
    ParseError,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolbridge.parsing._json_scan import JsonScanner

__all__ = [
    "CallFormat",
    "CallReader",
    "MarkerMatch",
    "ReadContext",
    "match_any",
    "match_marker",
    "read_to_marker",
]


@dataclass(frozen=True, slots=True)
class ReadContext:
    """What a reader may know about the request the output answers."""

    schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Each offered tool's input JSON Schema, by name: dialects whose argument values are bare text
    (`qwen3_xml`, `glm`) type them by it. Empty when unknown; values then stay as the model wrote them."""

    def parameter_schema(self, tool: str, parameter: str) -> Mapping[str, Any] | None:
        properties = self.schemas.get(tool, {}).get("properties")
        if not isinstance(properties, Mapping):
            return None
        schema = properties.get(parameter)
        return schema if isinstance(schema, Mapping) else None


NO_CONTEXT = ReadContext()


class MarkerMatch(enum.Enum):
    FULL = "full"
    PARTIAL = "partial"
    """The text ends with a proper prefix of the marker: wait for more before deciding."""
    NONE = "none"


def match_marker(text: str, index: int, marker: str) -> MarkerMatch:
    if text.startswith(marker, index):
        return MarkerMatch.FULL
    rest = len(text) - index
    if rest < len(marker) and marker.startswith(text[index:]):
        return MarkerMatch.PARTIAL
    return MarkerMatch.NONE


def match_any(
    text: str, index: int, markers: tuple[str, ...]
) -> str | Literal[MarkerMatch.PARTIAL, MarkerMatch.NONE]:
    """The marker at `text[index]`; PARTIAL if the text ends with the start of one; else NONE."""
    partial = False
    for marker in markers:
        outcome = match_marker(text, index, marker)
        if outcome is MarkerMatch.FULL:
            return marker
        partial = partial or outcome is MarkerMatch.PARTIAL
    return MarkerMatch.PARTIAL if partial else MarkerMatch.NONE


def read_to_marker(text: str, pos: int, marker: str, body: list[str]) -> tuple[int, MarkerMatch]:
    """Append `text[pos:]` to `body` up to `marker`: (its index, FULL), or (the index of a partial marker
    ending `text`, PARTIAL), or (len(text), NONE). It stops nowhere else: a reader's early return is
    taken for a held-back marker, and that text would be read again (or dropped at the end)."""
    first = marker[0]
    while (index := text.find(first, pos)) >= 0:
        body.append(text[pos:index])
        outcome = match_marker(text, index, marker)
        if outcome is not MarkerMatch.NONE:
            return index, outcome
        body.append(first)  # a tag of another dialect, say `<function=...>`: part of the body
        pos = index + 1
    body.append(text[pos:])
    return len(text), MarkerMatch.NONE


class CallReader(ABC):
    """Reads the body of one call, from just after its opening marker to just after its end.

    `read(text, pos, events)` consumes `text[pos:]` and returns the index it reached. Afterwards either
    `finished` is set (the call ended there; the rest is ordinary output), or `rejected_text` is set (it
    was not a call after all; that text is shown as content and reading resumes at the index), or the
    index is `len(text)`, or it is smaller: the tail might begin a closing marker and is handed back
    with the next chunk.
    """

    format_name: ClassVar[str]

    def __init__(self, opening_marker: str) -> None:
        self.finished = False
        self.rejected_text: str | None = None
        self.between_calls = False
        """Every call this reader read is complete; it only waits to see whether another follows (a
        dialect with no closing marker, such as `;` between Llama 3 JSON calls). A cut-off output
        ending here lost no call."""
        self._opening_marker = opening_marker
        self._started = False
        self._early_arguments: list[str] = []

    @abstractmethod
    def read(self, text: str, pos: int, events: list[Event]) -> int: ...

    def read_char(self, char: str) -> list[Event] | None:
        """Optional fast path for one-character deltas: the events, or None to take the general path."""
        return None

    @abstractmethod
    def finish(self, tail: str, events: list[Event]) -> str:
        """The output ended inside the call (`tail` is held-back text). Emit the outcome; return text
        that turned out to follow the call and must be read as ordinary output (usually "")."""

    def _announce(self, name: str, events: list[Event]) -> None:
        if self._started:
            return
        self._started = True
        events.append(ToolCallStart(name))
        if self._early_arguments:
            events.append(ToolCallArgumentsDelta("".join(self._early_arguments)))
            self._early_arguments.clear()

    def _arguments_text(self, text: str, events: list[Event]) -> None:
        # Arguments seen before the name are held so that ToolCallStart always comes first.
        if self._started:
            events.append(ToolCallArgumentsDelta(text))
        else:
            self._early_arguments.append(text)

    def _read_json_arguments(
        self,
        scanner: JsonScanner,
        text: str,
        pos: int,
        body: list[str],
        events: list[Event],
        at_stop: Callable[[int], int | None],
    ) -> int:
        """Read a body of JSON arguments from `text[pos]`: each piece into `body` and out as argument text.
        Returns where it stopped: the JSON's end (`scanner.done`), the text's end, or what `at_stop` gives
        for a '<' outside strings at that index (None: not a marker, broken JSON, read on)."""
        while True:
            end = scanner.scan(text, pos)
            if end > pos:
                body.append(text[pos:end])
                self._arguments_text(text[pos:end], events)
            if scanner.done or not scanner.stopped:
                return end
            stopped_at = at_stop(end)
            if stopped_at is not None:
                return stopped_at
            scanner.step_over_stop()
            body.append("<")
            self._arguments_text("<", events)
            pos = end + 1

    def _complete(self, build: Callable[[], ParsedToolCall], raw: str, events: list[Event]) -> None:
        """End the call: `build()` makes it, or raises `CallProblem`, which becomes a `ParseError`."""
        self.finished = True
        try:
            call = build()
        except CallProblem as problem:
            events.append(ParseError(f"Could not read the {self.format_name} tool call: {problem}.", raw))
            return
        self._announce(call.name, events)
        events.append(ToolCallEnd(call))


class CallFormat(ABC):
    """A way of writing tool calls in text: both writing them (what a model is asked for, and how its
    earlier calls are shown to it again) and reading them."""

    name: ClassVar[str]
    opening_markers: ClassVar[tuple[str, ...]]
    stray_markers: ClassVar[tuple[str, ...]] = ()
    """Closing markers that are dropped when they appear outside a call (never shown as content)."""
    end_of_turn_markers: ClassVar[tuple[str, ...]] = ()
    """End-of-turn tokens a server let through: dropped in content and in reasoning alike."""
    named_markers: ClassVar[tuple[str, ...]] = ()
    """Opening markers looked for only when this format is asked for by name, never in `auto`: they
    also begin ordinary text (`{`, `[`), so only a caller who knows the model writes them may say so.
    Their reader shows the text again (`rejected_text`) when it turns out not to be a call."""
    leading_markers: ClassVar[tuple[str, ...]] = ()
    """Opening markers looked for only at the very start of the output (after white space): the prompt
    left the model inside a call's header, as gpt-oss's ` to=functions.NAME<|channel|>...` after a
    prompt that ended in `<|start|>assistant`."""
    reasoning_markers: ClassVar[tuple[tuple[str, str], ...]] = ()
    """(open, close) pairs around reasoning besides `<think>`/`</think>`, e.g. `[THINK]`/`[/THINK]`."""
    call_noun: ClassVar[str]
    """What one call is called in instructions to a model, e.g. "<tool_call> block"."""
    call_instructions: ClassVar[str]
    """How to write one call, completing "To call a tool, write ..."."""

    @abstractmethod
    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """One call as a model should write it; reading it back gives the same name and arguments."""

    @abstractmethod
    def start_call(self, marker: str, context: ReadContext) -> CallReader: ...
