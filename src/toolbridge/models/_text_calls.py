"""Calls written in a model's text, turned into the events a native model yields.

`calls_from_text(events, reading)` passes a stream through the parser: text and reasoning come out
clean, each complete call becomes one `ToolCallDelta` (native deltas keep coming, on indexes of their
own), unreadable calls become `InvalidToolCall`s, and once the calls are complete and the model goes
on writing anything else, the stream ends (`Finish(..., closed_early=True)`) so no one waits for it.
A reply that stopped at the token limit (finish reason `length`) inside a call yields no call for it:
the model is told it was cut off. Only model output is ever parsed: never a tool result or a user
message.

Most text has no markup in it (a native model's remark before its native call), and it should cost
next to nothing to look: once the parser has shown a chunk as it came (so it holds nothing back and is
in plain content), a chunk with no character a marker can begin with (`MARKER_STARTS`) passes as it
came, without the parser: fed to it, it would come out the same and leave the parser as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbridge.models._prompt_transcript import RESULT_CLOSE, inside_result_block
from toolbridge.models.base import (
    Finish,
    InvalidToolCall,
    ModelEvent,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
)
from toolbridge.parsing import CallFormat, ParseError, StreamParser, ToolCallEnd, call_format, dialect_names
from toolbridge.parsing import Event as ParserEvent
from toolbridge.parsing import ReasoningDelta as ParsedReasoning
from toolbridge.parsing import TextDelta as ParsedText

__all__ = ["MARKER_STARTS", "TextReading", "calls_from_text", "invalid_call_feedback"]


def _marker_starts() -> frozenset[str]:
    markers = ["<think>", "</think>"]
    for fmt in map(call_format, dialect_names()):
        markers += [*fmt.opening_markers, *fmt.named_markers, *fmt.stray_markers, *fmt.end_of_turn_markers]
        markers += [marker for pair in fmt.reasoning_markers for marker in pair]
    return frozenset(marker[0] for marker in markers)


MARKER_STARTS = _marker_starts()
"""The characters any marker of any dialect begins with (`<`, `[`, a backtick, `{`): more than one
format's, so it holds for every one."""
_MARKER_START = re.compile("[" + re.escape("".join(sorted(MARKER_STARTS))) + "]").search


@dataclass(frozen=True)
class TextReading:
    """How to read a model's text: the dialect it is asked to write (named in feedback), the parser's
    format (`auto` unless the dialect has markers `auto` does not look for), and the request's tools."""

    dialect: CallFormat
    format: str = "auto"
    reasoning_open: bool = False
    schemas: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def invalid_call_feedback(error: ParseError, dialect: CallFormat) -> str:
    """A tool-result-style block telling the model that a call of its could not be read, and why."""
    if error.cut_off:
        return (
            f'<tool_result name="" error="true">{error.message}\nYou wrote: '
            f"{inside_result_block(error.raw)}{RESULT_CLOSE}"
        )
    example = dialect.format_call("tool_name", {"parameter": "value"})
    return (
        f'<tool_result name="" error="true">Your tool call could not be parsed, so it did not run. '
        f"{error.message}\nYou wrote: {inside_result_block(error.raw)}\n"
        f"Write each call like {inside_result_block(example)}.{RESULT_CLOSE}"
    )


async def calls_from_text(
    events: AsyncIterator[ModelEvent], reading: TextReading
) -> AsyncGenerator[ModelEvent]:
    reader = _TextCallReader(reading)
    finish: Finish | None = None
    async for event in events:
        if isinstance(event, TextDelta):
            text = event.text
            if not text:
                continue
            if reader.shows_as_it_comes and _MARKER_START(text) is None:
                yield event  # what the parser would make of it, as it came (see the module's docstring)
                continue
            parsed = reader.parser().feed(text)
            reader.shows_as_it_comes = _shown_as_it_came(parsed, text) and not reader.after_text_calls
            if reader.shows_as_it_comes:
                yield event
                continue
        elif isinstance(event, ReasoningDelta):
            reader.server_separates_reasoning = True
            parsed = [ParsedReasoning(event.text)]
        elif isinstance(event, ToolCallDelta):
            yield reader.native(event)
            continue
        elif isinstance(event, Finish):
            finish = event  # held back: calls still in the parser come first
            continue
        else:
            yield event
            continue
        out, moved_on = reader.take(parsed)
        for item in out:
            yield item
        if moved_on:
            yield Finish("tool_calls", closed_early=True)
            return
    truncated = finish is not None and finish.reason == "length"
    for item in reader.take(reader.parser().finish(truncated=truncated))[0]:
        yield item
    if finish is not None:
        yield finish


class _TextCallReader:
    def __init__(self, reading: TextReading) -> None:
        self._reading = reading
        self._parser: StreamParser | None = None
        self.server_separates_reasoning = False
        """The server sent reasoning apart from the text (a reasoning parser in vLLM, Ollama's
        `thinking`): then the text does not start inside reasoning, whatever the template does."""
        self.after_text_calls = False
        self.shows_as_it_comes = False
        """The parser showed the last chunk it was fed as it came, as content: it holds nothing back."""
        self._indexes: dict[int, int] = {}
        self._next_index = 0

    def parser(self) -> StreamParser:
        """Made at the first text, when it is known whether the server separated the reasoning."""
        if self._parser is None:
            reading = self._reading
            reasoning_open = reading.reasoning_open and not self.server_separates_reasoning
            self._parser = StreamParser(
                reading.format, reasoning_open=reasoning_open, schemas=reading.schemas
            )
        return self._parser

    def native(self, delta: ToolCallDelta) -> ToolCallDelta:
        index = self._indexes.get(delta.index)
        if index is None:
            index = self._indexes[delta.index] = self._new_index()
        return ToolCallDelta(index, delta.id, delta.name, delta.arguments, delta.source)

    def _new_index(self) -> int:
        self._next_index += 1
        return self._next_index - 1

    def take(self, parsed: list[ParserEvent]) -> tuple[list[ModelEvent], bool]:
        """The model events for parser events, and whether the model moved on after its calls."""
        out: list[ModelEvent] = []
        for event in parsed:
            if isinstance(event, ParsedText):
                if self.after_text_calls:
                    if event.text.strip():
                        return out, True
                    continue  # white space between calls
                out.append(TextDelta(event.text))
            elif isinstance(event, ParsedReasoning):
                if self.after_text_calls:
                    return out, True
                out.append(ReasoningDelta(event.text))
            elif isinstance(event, ToolCallEnd):
                call = event.call
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                out.append(ToolCallDelta(self._new_index(), call.id, call.name, arguments, call.source))
                self.after_text_calls = True
            elif isinstance(event, ParseError):
                feedback = invalid_call_feedback(event, self._reading.dialect)
                out.append(InvalidToolCall(event.message, event.raw, feedback))
                self.after_text_calls = True
            # ToolCallStart and argument deltas: progress only; the finished call is what counts.
        return out, False


def _shown_as_it_came(parsed: list[ParserEvent], text: str) -> bool:
    return len(parsed) == 1 and isinstance(parsed[0], ParsedText) and parsed[0].text == text
