"""Calls written in a model's text, turned into the events a native model yields.

`calls_from_text(events, reading)` passes a stream through the parser: text and reasoning come out
clean, each complete call becomes one `ToolCallDelta` (native deltas keep coming, on indexes of their
own), unreadable calls become `InvalidToolCall`s, and once the calls are complete and the model goes
on writing anything else, the stream ends (`Finish(..., closed_early=True)`) so no one waits for it.
A reply that stopped at the token limit (finish reason `length`) inside a call yields no call for it:
the model is told it was cut off. Only model output is ever parsed: never a tool result or a user
message.
"""

from __future__ import annotations

import json
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
from toolbridge.parsing import CallFormat, ParseError, StreamParser, ToolCallEnd
from toolbridge.parsing import Event as ParserEvent
from toolbridge.parsing import ReasoningDelta as ParsedReasoning
from toolbridge.parsing import TextDelta as ParsedText

__all__ = ["TextReading", "calls_from_text", "invalid_call_feedback"]


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
            parsed = reader.parser().feed(event.text)
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
        self._after_text_calls = False
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
                if self._after_text_calls:
                    if event.text.strip():
                        return out, True
                    continue  # white space between calls
                out.append(TextDelta(event.text))
            elif isinstance(event, ParsedReasoning):
                if self._after_text_calls:
                    return out, True
                out.append(ReasoningDelta(event.text))
            elif isinstance(event, ToolCallEnd):
                call = event.call
                arguments = json.dumps(call.arguments, ensure_ascii=False)
                out.append(ToolCallDelta(self._new_index(), call.id, call.name, arguments, call.source))
                self._after_text_calls = True
            elif isinstance(event, ParseError):
                feedback = invalid_call_feedback(event, self._reading.dialect)
                out.append(InvalidToolCall(event.message, event.raw, feedback))
                self._after_text_calls = True
            # ToolCallStart and argument deltas: progress only; the finished call is what counts.
        return out, False
