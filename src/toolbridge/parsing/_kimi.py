"""`kimi`: Kimi K2.x's special-token markup (K2-Instruct, K2-0905, K2-Thinking, K2.5, K2.6).

    <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>
    {"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>

(one line in the model's output). A call opens at `<|tool_call_begin|>`. The section around the calls
(also the singular `<|tool_call_section_begin|>` some checkpoints write, and K3's `tools` channel) is
markup: the white space between its calls is not content. Text in it that begins no call ends it early,
and is output again. A section end, `<|tool_call_end|>` or `<|im_end|>` outside calls is dropped. The header `functions.NAME:IDX` is the call's id, kept
whole so that it round-trips into the history; the name is the part between `functions.` (optional) and
the last `:`. The arguments are one JSON object; the end marker inside a JSON string is data.

Some K2.x checkpoints write only the counter as the header (`<|tool_call_begin|>0 <|tool_call_argument_begin|>`,
as vLLM's kimi_k2 parser accepts). The tool is then the offered one its arguments fit: the only tool
offered, or the only one whose parameters hold every argument and whose required ones are all given;
its id is `functions.NAME:0`, the form the template writes back. When no single tool fits (or the tools
are not known), the call is reported, never guessed.

A call cut off before its JSON is complete is reported as an error, never repaired into a call.
K2-Thinking's `<think>` is the parser's own. K3's channel markup (`<|open|>call tool="NAME" index="1"<|sep|>`
... in a `tools` channel, `think` as reasoning) is read by `_kimi_k3`; calls are still written in K2's.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from toolbridge.parsing._calls import CallProblem, decode_arguments
from toolbridge.parsing._events import Event, ParsedToolCall
from toolbridge.parsing._format import (
    CallFormat,
    CallReader,
    MarkerMatch,
    ReadContext,
    match_any,
    match_marker,
    read_to_marker,
)
from toolbridge.parsing._json_scan import JsonScanner
from toolbridge.parsing._kimi_k3 import K3_CLOSE, K3_OPEN, K3_REASONING, K3_SEP, K3_WRAPPERS, K3Reader

__all__ = ["KimiFormat"]

SECTION_OPEN = "<|tool_calls_section_begin|>"
SECTION_CLOSE = "<|tool_calls_section_end|>"
SECTION_OPENS = (SECTION_OPEN, "<|tool_call_section_begin|>")
SECTION_CLOSES = (SECTION_CLOSE, "<|tool_call_section_end|>")
K3_TOOLS_OPEN = f"{K3_OPEN}tools{K3_SEP}"
K3_TOOLS_CLOSE = f"{K3_CLOSE}tools{K3_SEP}"
OPEN = "<|tool_call_begin|>"
ARGUMENTS = "<|tool_call_argument_begin|>"
CLOSE = "<|tool_call_end|>"
_HEADER_MARKERS = (ARGUMENTS, CLOSE)
_NON_WHITESPACE = re.compile(r"\S")
_INDEX = re.compile(r":\d+")
_COUNTER = re.compile(r"(?:functions\.)?(\d+)")


class _State(enum.Enum):
    HEADER = enum.auto()
    """`functions.NAME:IDX`, up to `<|tool_call_argument_begin|>`."""
    BEFORE_JSON = enum.auto()
    JSON = enum.auto()
    AFTER_JSON = enum.auto()
    NOT_JSON = enum.auto()
    """The arguments do not start with `{`: kept until `<|tool_call_end|>`, then decoded or reported."""


def _partial_marker(text: str, index: int, markers: tuple[str, ...]) -> bool:
    return any(match_marker(text, index, marker) is MarkerMatch.PARTIAL for marker in markers)


def read_header(header: str) -> tuple[str, str | None]:
    """The tool name and call id in `functions.NAME:IDX` (id None when there is no `:IDX`)."""
    header = header.strip()
    name = header.removeprefix("functions.")
    colon = name.rfind(":")
    if colon < 0 or not _INDEX.fullmatch(name, colon):
        return name.strip(), None
    return name[:colon].strip(), header


def tool_for_counter(counter: str, arguments: Mapping[str, Any], context: ReadContext) -> str:
    """The offered tool a call whose header is only a counter must be, by its arguments."""
    fitting = [
        name
        for name, schema in context.schemas.items()
        if len(context.schemas) == 1 or _fits(schema, arguments)
    ]
    if len(fitting) != 1:
        which = "no offered tool" if not fitting else f"{len(fitting)} offered tools"
        raise CallProblem(
            f"its header {counter!r} names no tool and its arguments fit {which}; "
            f"write functions.NAME:{counter} with the tool's name"
        )
    return fitting[0]


def _fits(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> bool:
    properties = schema.get("properties")
    required = schema.get("required")
    if not isinstance(properties, Mapping) or not all(key in properties for key in arguments):
        return False
    return not isinstance(required, list) or all(key in arguments for key in required)


class _KimiReader(CallReader):
    format_name = "kimi"

    def __init__(self, opening_marker: str, context: ReadContext) -> None:
        super().__init__(opening_marker)
        self._context = context
        self._counter: str | None = None
        """The header was only this counter: the tool is found from the arguments at the end."""
        self._state = _State.HEADER
        self._header: list[str] = []
        self._body: list[str] = []
        self._scanner = JsonScanner(stop_chars="<")
        self._name = ""
        self._id: str | None = None

    def read_char(self, char: str) -> list[Event] | None:
        if self._state is not _State.JSON or not self._scanner.consume_plain_char(char):
            return None
        self._body.append(char)
        events: list[Event] = []
        self._arguments_text(char, events)
        return events

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n and not self.finished:
            state = self._state
            if state is _State.HEADER:
                pos = self._read_header(text, pos, events)
                if pos < n and self._state is _State.HEADER and not self.finished:
                    return pos  # held back: might be a marker
                continue
            if state is _State.JSON:
                pos = self._read_json(text, pos, events)
                if pos < n and self._state is _State.JSON and not self.finished:
                    return pos  # held back: might be <|tool_call_end|>
                continue
            if state is _State.NOT_JSON:
                pos = self._read_not_json(text, pos, events)
                if pos < n and not self.finished:
                    return pos
                continue
            match = _NON_WHITESPACE.search(text, pos)
            if match is None:
                return n
            index = match.start()
            if state is _State.BEFORE_JSON:
                self._state = _State.JSON if text[index] in "{[" else _State.NOT_JSON
                pos = index
                continue
            outcome = match_marker(text, index, CLOSE)  # after the JSON: expect <|tool_call_end|>
            if outcome is MarkerMatch.PARTIAL:
                return index
            self._finish_json(events, closed=outcome is MarkerMatch.FULL)
            # Without an end marker the call ends at its last brace; what follows is output.
            return index + len(CLOSE) if outcome is MarkerMatch.FULL else index
        return pos

    def _read_header(self, text: str, pos: int, events: list[Event]) -> int:
        while (index := text.find("<", pos)) >= 0:
            self._header.append(text[pos:index])
            if match_marker(text, index, ARGUMENTS) is MarkerMatch.FULL:
                header = "".join(self._header)
                counter = _COUNTER.fullmatch(header.strip())
                if counter is not None:
                    self._counter = counter.group(1)
                    only = list(self._context.schemas) if len(self._context.schemas) == 1 else [""]
                    self._name, self._id = only[0], None  # known at once when one tool is offered
                else:
                    self._name, self._id = read_header(header)
                if self._name:
                    self._announce(self._name, events)
                self._state = _State.BEFORE_JSON
                return index + len(ARGUMENTS)
            if match_marker(text, index, CLOSE) is MarkerMatch.FULL:
                self._report(events, "it has no <|tool_call_argument_begin|>", closed=True)
                return index + len(CLOSE)
            if _partial_marker(text, index, _HEADER_MARKERS):
                return index
            self._header.append("<")
            pos = index + 1
        self._header.append(text[pos:])
        return len(text)

    def _read_json(self, text: str, pos: int, events: list[Event]) -> int:
        def at_stop(index: int) -> int | None:
            outcome = match_marker(text, index, CLOSE)
            if outcome is MarkerMatch.FULL:
                self._finish_json(events, closed=True)
                return index + len(CLOSE)
            return index if outcome is MarkerMatch.PARTIAL else None

        end = self._read_json_arguments(self._scanner, text, pos, self._body, events, at_stop)
        if self._scanner.done:
            self._state = _State.AFTER_JSON
        return end

    def _read_not_json(self, text: str, pos: int, events: list[Event]) -> int:
        """Read up to `<|tool_call_end|>`."""
        index, outcome = read_to_marker(text, pos, CLOSE, self._body)
        if outcome is MarkerMatch.FULL:
            self._finish_json(events, closed=True)
            return index + len(CLOSE)
        return index

    def _raw(self, body: str, *, closed: bool) -> str:
        arguments = ARGUMENTS if self._state is not _State.HEADER else ""
        return self._opening_marker + "".join(self._header) + arguments + body + (CLOSE if closed else "")

    def _finish_json(self, events: list[Event], *, closed: bool, body: str | None = None) -> None:
        body = "".join(self._body) if body is None else body

        def build() -> ParsedToolCall:
            if not self._name and self._counter is None:
                raise CallProblem("it has no tool name; write functions.NAME:INDEX")
            if self._state is _State.NOT_JSON and body.strip():
                raise CallProblem("its arguments are not a JSON object")
            arguments = decode_arguments(body)
            if self._counter is not None:
                name = tool_for_counter(self._counter, arguments, self._context)
                call_id = f"functions.{name}:{self._counter}"
                return ParsedToolCall(name=name, arguments=arguments, id=call_id, format="kimi")
            return ParsedToolCall(name=self._name, arguments=arguments, id=self._id, format="kimi")

        self._complete(build, self._raw(body, closed=closed), events)

    def _report(self, events: list[Event], reason: str, *, closed: bool) -> None:
        def build() -> ParsedToolCall:
            raise CallProblem(reason)

        self._complete(build, self._raw("".join(self._body), closed=closed), events)

    def finish(self, tail: str, events: list[Event]) -> str:
        # `tail` can only be the start of a marker that never completed: a fragment, dropped.
        body = "".join(self._body)
        if self._state is _State.JSON and self._scanner.in_string:
            close = body.find(CLOSE)
            if close >= 0:
                # An unterminated string swallowed the end marker: cut there, read the rest as output.
                self._finish_json(events, closed=True, body=body[:close])
                return body[close + len(CLOSE) :]
        if self._state is _State.AFTER_JSON:
            self._finish_json(events, closed=False)
        else:
            self._report(events, "the output ended before the call was complete (cut off)", closed=False)
        return ""


class _SectionReader(CallReader):
    """A section of calls (K2's `<|tool_calls_section_begin|>`, K3's `tools` channel), each call read by
    its own reader. Between calls only white space (the template's layout, not content), a stray call
    end (dropped) and the section's end are expected; any other text ends the section there."""

    format_name = "kimi"

    def __init__(
        self,
        opening_marker: str,
        call_begins: tuple[str, ...],
        section_ends: tuple[str, ...],
        start: Callable[[str], CallReader],
    ) -> None:
        super().__init__(opening_marker)
        self._call_begins = call_begins
        self._section_ends = section_ends
        self._between = (*call_begins, *section_ends, CLOSE)
        self._start = start
        self._call: CallReader | None = None
        self._calls = 0

    def read_char(self, char: str) -> list[Event] | None:
        return None if self._call is None else self._call.read_char(char)

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        pos = self._read(text, pos, events)
        # After a call's end the section may simply stop: an output cut off there lost no call.
        self.between_calls = self._call is None and self._calls > 0
        return pos

    def _read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n:
            call = self._call
            if call is not None:
                pos = call.read(text, pos, events)
                if call.rejected_text is not None:  # not a call: the section ends, that text is output
                    self.rejected_text = call.rejected_text
                    return pos
                if not call.finished:
                    return pos  # the text's end, or held back: might be a marker
                self._call = None
                self._calls += 1
                continue
            match = _NON_WHITESPACE.search(text, pos)
            if match is None:
                return n
            index = match.start()
            found = match_any(text, index, self._between)
            if found is MarkerMatch.PARTIAL:
                return index
            if found is MarkerMatch.NONE:
                self.finished = True  # text that begins no call: output again
                return index
            pos = index + len(found)
            if found in self._section_ends:
                self.finished = True
                return pos
            if found in self._call_begins:
                self._call = self._start(found)
            # else a stray <|tool_call_end|> between calls: dropped
        return pos

    def finish(self, tail: str, events: list[Event]) -> str:
        call, self._call = self._call, None
        if call is None:
            return ""  # `tail` can only be the start of a marker that never completed: dropped
        leftover = call.finish(tail, events)
        self.rejected_text = call.rejected_text
        return leftover


class KimiFormat(CallFormat):
    name = "kimi"
    opening_markers = (*SECTION_OPENS, K3_TOOLS_OPEN, OPEN, K3_OPEN, K3_CLOSE)
    reasoning_markers = (K3_REASONING,)
    stray_markers = (
        *(wrapper for wrapper in K3_WRAPPERS if wrapper != K3_TOOLS_OPEN),
        K3_SEP,
        *SECTION_CLOSES,
        ARGUMENTS,
        CLOSE,
    )
    end_of_turn_markers = ("<|im_end|>",)
    call_noun = "<|tool_call_begin|> block"
    call_instructions = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|> "
        "followed by one JSON object matching the tool's parameters, then "
        "<|tool_call_end|><|tool_calls_section_end|> (NAME is the tool's name)"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        body = json.dumps(arguments, ensure_ascii=False)
        return f"{SECTION_OPEN}{OPEN}functions.{name}:0{ARGUMENTS}{body}{CLOSE}{SECTION_CLOSE}"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        if marker in SECTION_OPENS:
            return _SectionReader(marker, (OPEN,), SECTION_CLOSES, lambda m: _KimiReader(m, context))
        if marker == K3_TOOLS_OPEN:
            return _SectionReader(marker, (K3_OPEN,), (K3_TOOLS_CLOSE,), K3Reader)
        return _KimiReader(marker, context) if marker == OPEN else K3Reader(marker)
