"""`deepseek`: DeepSeek's tool-call markup, in all of its variants (docs/dialects.md#deepseek).

    V3 / R1:  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
              ```json
              {...}
              ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
    V3.1:     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
    DSML:     <｜DSML｜function_calls>                  (V3.2; V4: tool_calls; V4.1: " calls")
              <｜DSML｜invoke name="NAME">              (V4.1: "<｜DSML｜ invoke", " parameter")
              <｜DSML｜parameter name="K" string="true">raw text</｜DSML｜parameter>
              <｜DSML｜parameter name="N" string="false">3</｜DSML｜parameter>
              </｜DSML｜invoke>
              <｜DSML｜invoke name="NOW"/>               (V4: a call without arguments)
              </｜DSML｜function_calls>

The bars are U+FF5C and `▁` is U+2581. A section holds one or more calls; each call is reported when its
own end marker arrives, and its JSON arguments stream as they arrive (DSML parameters, which are no
JSON text, come as one JSON delta with the call). A call cut off by the end of the output is an error,
never a call. Text in a section that begins no call ends the section early: it is ordinary output again.
The three DSML spellings are one markup: any of its section, invoke and parameter tags is read inside
any DSML section, and an invoke with no section around it is read too. A string parameter
(`string="true"`) is kept exactly; `string="false"` is JSON, and its raw text when it is not. DeepSeek
gives no call id. Its `<think>` reasoning is the stream parser's own; `<｜end▁of▁sentence｜>` is dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._calls import CallProblem, call_from_fields, decode_arguments, decode_json
from toolbridge.parsing._events import Event, ParsedToolCall, ParseError, ToolCallArgumentsDelta, ToolCallEnd
from toolbridge.parsing._format import (
    CallFormat,
    CallReader,
    MarkerMatch,
    ReadContext,
    match_any,
)

__all__ = ["DeepSeekFormat"]

CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
# R1 also writes its section opener these ways (llama.cpp reads all of them); the short one leaves out
# the first call's `<｜tool▁call▁begin｜>` too.
SHORT_CALLS_BEGIN = "<｜tool▁calls｜>"
CALLS_BEGINS = (
    CALLS_BEGIN,
    "<｜tool_calls_begin｜>",
    "<｜tool calls begin｜>",
    "<｜tool\\_calls\\_begin｜>",
    SHORT_CALLS_BEGIN,
)
CALLS_END = "<｜tool▁calls▁end｜>"
CALL_BEGIN = "<｜tool▁call▁begin｜>"
CALL_END = "<｜tool▁call▁end｜>"
SEP = "<｜tool▁sep｜>"
END_OF_SENTENCE = "<｜end▁of▁sentence｜>"

DSML_BEGIN = "<｜DSML｜function_calls>"
DSML_END = "</｜DSML｜function_calls>"
V4_BEGIN = "<｜DSML｜tool_calls>"
V4_END = "</｜DSML｜tool_calls>"
V41_BEGIN = "<｜DSML｜ calls>"
V41_END = "</｜DSML｜ calls>"
INVOKE_BEGIN = "<｜DSML｜invoke"
INVOKE_END = "</｜DSML｜invoke>"
PARAMETER_BEGIN = "<｜DSML｜parameter"
PARAMETER_END = "</｜DSML｜parameter>"
# V4.1's tag names begin with a space.
INVOKE_BEGINS = (INVOKE_BEGIN, "<｜DSML｜ invoke")
INVOKE_ENDS = (INVOKE_END, "</｜DSML｜ invoke>")
PARAMETER_BEGINS = (PARAMETER_BEGIN, "<｜DSML｜ parameter")
PARAMETER_ENDS = (PARAMETER_END, "</｜DSML｜ parameter>")
DSML_BEGINS = (DSML_BEGIN, V4_BEGIN, V41_BEGIN)
DSML_ENDS = (DSML_END, V4_END, V41_END)
_IN_PARAMETER = (*PARAMETER_ENDS, *DSML_ENDS, END_OF_SENTENCE)  # the last ones: its end was left out
_DSML_INSIDE = (*INVOKE_ENDS, *INVOKE_BEGINS, *DSML_ENDS, END_OF_SENTENCE, *PARAMETER_BEGINS)

_INVOKE_HEADER = re.compile(r'\s+name\s*=\s*"([^"]*)"\s*(/?)>')
_PARAMETER = re.compile(
    r'<｜DSML｜ ?parameter\s+name\s*=\s*"([^"]*)"(?:\s+string\s*=\s*"(true|false)")?\s*>(.*?)</｜DSML｜ ?parameter>',
    re.DOTALL,
)
_FENCE = re.compile(r"\s*```[a-zA-Z]*\s*\n?(.*?)\s*```\s*", re.DOTALL)
_NON_WHITESPACE = re.compile(r"\S")
_TAG_END_OR_MARKER = re.compile(r"[<>]")
# Between a call's header and its JSON arguments: white space, and in V3 the opening ```json line.
_ARGUMENTS_START = re.compile(r"\s*(?:```[a-zA-Z]*\s*)?\{")
_BEFORE_ARGUMENTS = re.compile(r"\s*(?:`{0,3}|```[a-zA-Z]*\s*)")
_BEFORE_ARGUMENTS_LIMIT = 64
_ARGUMENTS_TAIL = " \t\r\n`"


class _Variant:
    """The markers of one markup: what opens a call, what ends it, and what ends the section."""

    def __init__(
        self, call_begins: tuple[str, ...], call_ends: tuple[str, ...], section_ends: tuple[str, ...]
    ) -> None:
        self.call_begins = call_begins
        self.call_ends = call_ends
        self.section_ends = (*section_ends, END_OF_SENTENCE)
        # Between calls: these are read; anything else ends the section.
        self.between = (*call_begins, *self.section_ends, *call_ends)
        # Inside a call: its own end, or a marker that shows the end was left out.
        self.inside = (*call_ends, *call_begins, *self.section_ends)


_TOOL_CALLS = _Variant((CALL_BEGIN,), (CALL_END,), (CALLS_END,))
_DSML = _Variant(INVOKE_BEGINS, INVOKE_ENDS, DSML_ENDS)


class _DeepSeekReader(CallReader):
    format_name = "deepseek"

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._variant = _TOOL_CALLS if opening_marker in CALLS_BEGINS else _DSML
        self._in_call = opening_marker in INVOKE_BEGINS  # an invoke without its section
        self._call_begin = opening_marker
        """The marker that opened the call being read."""
        self._in_header = self._in_call
        self._in_call |= opening_marker == SHORT_CALLS_BEGIN  # its first call has begun
        """In a DSML invoke's tag, up to its `>` (or the `/>` that ends a call without arguments)."""
        self._body: list[str] = []
        self._calls = 0
        self._in_parameter = False
        """Inside a DSML parameter's value, where only its own end marker counts."""
        self._before_arguments: str | None = ""
        """The call's text after its header, until it shows where (or whether) a JSON object starts."""
        self._in_arguments = False
        self._held: list[str] = []
        self._streamed = False

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        end = self._read(text, pos, events)
        # After a call's end the section may simply stop: an output cut off there lost no call.
        self.between_calls = not self._in_call and self._calls > 0
        return end

    def _read(self, text: str, pos: int, events: list[Event]) -> int:
        variant = self._variant
        n = len(text)
        while pos < n:
            if self._in_call:
                if self._in_header and (pos := self._read_header(text, pos, events)) >= n:
                    return n
                if not self._in_call:
                    continue
                index = text.find("<", pos)
                if index < 0:
                    self._add_body(text[pos:], events)
                    return n
                self._add_body(text[pos:index], events)
                markers: tuple[str, ...]
                if self._in_parameter:
                    markers = _IN_PARAMETER
                else:
                    markers = _DSML_INSIDE if variant is _DSML else variant.inside
                found = match_any(text, index, markers)
                if found is MarkerMatch.PARTIAL:
                    return index  # handed back with the next chunk
                if found is MarkerMatch.NONE:
                    self._add_body("<", events)
                    pos = index + 1
                    continue
                if found in PARAMETER_BEGINS or found in PARAMETER_ENDS:
                    self._in_parameter = found in PARAMETER_BEGINS
                    self._add_body(found, events)
                    pos = index + len(found)
                    continue
                closed = found in variant.call_ends
                self._end_call(events, found if closed else "")
                # The call's own end is consumed; any other marker is read again between calls.
                pos = index + len(found) if closed else index
                continue
            match = _NON_WHITESPACE.search(text, pos)
            if match is None:
                return n
            index = match.start()
            found = match_any(text, index, variant.between)
            if found is MarkerMatch.PARTIAL:
                return index
            if found is MarkerMatch.NONE:
                return self._end_section(events, index)  # text that begins no call: output again
            if found in variant.call_begins:
                self._in_call = True
                self._in_header = variant is _DSML
                self._call_begin = found
            elif found in variant.section_ends:
                return self._end_section(events, index + len(found))
            pos = index + len(found)  # a stray call end between calls: dropped
        return pos

    def _read_header(self, text: str, pos: int, events: list[Event]) -> int:
        """Read an invoke's tag up to its `>`: a `/>` ends the call there (it has no arguments). A `<`
        first (a marker, the tag left unfinished) is for the caller to read."""
        found = _TAG_END_OR_MARKER.search(text, pos)
        if found is None or found.group() == "<":
            stop = len(text) if found is None else found.start()
            self._add_body(text[pos:stop], events)
            return stop
        end = found.start()
        self._add_body(text[pos : end + 1], events)
        self._in_header = False
        if "".join(self._body).endswith("/>"):
            self._end_call(events, "")
        return end + 1

    def _add_body(self, text: str, events: list[Event]) -> None:
        if not text:
            return
        self._body.append(text)
        if self._started:
            self._stream_arguments(text, events)
        # Only a separator, newline or `>` can complete the name: no joining on other text.
        elif "｜" in text or "\n" in text or ">" in text:
            header = self._header_so_far()
            if header is not None:
                name, header_end = header
                self._announce(name, events)
                self._stream_arguments("".join(self._body)[header_end:], events)

    def _stream_arguments(self, text: str, events: list[Event]) -> None:
        """Send the arguments' JSON text as it arrives: from its `{` (after V3's ```` ```json ```` line)
        to the call's end, less the white space and closing fence before it, which are held back until
        more text shows they are inside. DSML parameters are no JSON text: they come whole at the end."""
        if not self._in_arguments:
            if self._before_arguments is None:
                return  # no JSON object here
            text = self._before_arguments + text
            start = _ARGUMENTS_START.match(text[:_BEFORE_ARGUMENTS_LIMIT])
            if start is None:
                before = text[:_BEFORE_ARGUMENTS_LIMIT]
                waiting = len(text) < _BEFORE_ARGUMENTS_LIMIT and _BEFORE_ARGUMENTS.fullmatch(before)
                self._before_arguments = text if waiting else None
                return
            text = text[start.end() - 1 :]
            self._before_arguments = None
            self._in_arguments = True
        visible = text.rstrip(_ARGUMENTS_TAIL)
        if not visible:
            self._held.append(text)
            return
        tail = text[len(visible) :]
        if self._held:
            self._held.append(visible)
            visible = "".join(self._held)
            self._held.clear()
        if tail:
            self._held.append(tail)
        self._streamed = True
        self._arguments_text(visible, events)

    def read_char(self, char: str) -> list[Event] | None:
        if not self._in_arguments or self._held or char == "<" or char in _ARGUMENTS_TAIL:
            return None
        self._body.append(char)
        return [ToolCallArgumentsDelta(char)]

    def _header_so_far(self) -> tuple[str, int] | None:
        """The call's name once its text shows it, and where the header ends in the body, so that
        ToolCallStart comes early and the arguments can stream."""
        body = "".join(self._body)
        if self._variant is _DSML:
            header = _INVOKE_HEADER.match(body)
            if header is None or not header.group(1).strip():
                return None
            return header.group(1).strip(), header.end()
        before, sep, after = body.partition(SEP)
        if not sep:
            return None
        stripped = after.lstrip()
        if before.strip() != "function" or stripped.startswith("{"):
            return (before.strip(), len(before) + len(sep)) if before.strip() else None
        name, newline, _ = after.partition("\n")  # V3: the name runs to the newline
        if not newline or not name.strip():
            return None
        return name.strip(), len(before) + len(sep) + len(name) + 1

    def _end_call(self, events: list[Event], end_marker: str) -> None:
        """End the call at `end_marker`, its own end ("" when it was left out, or at a `/>`)."""
        body = "".join(self._body)
        self._body.clear()
        self._in_call = self._in_parameter = self._in_header = False
        self._calls += 1
        raw = self._call_begin + body + end_marker
        try:
            call = _read_invoke(body) if self._variant is _DSML else _read_tool_call(body)
        except CallProblem as problem:
            events.append(ParseError(f"Could not read the deepseek tool call: {problem}.", raw))
        else:
            self._announce(call.name, events)
            if not self._streamed:  # DSML parameters: the arguments as JSON, in one piece
                self._arguments_text(json.dumps(call.arguments, ensure_ascii=False), events)
            events.append(ToolCallEnd(call))
        self._started = self._streamed = self._in_arguments = False
        self._before_arguments = ""
        self._held.clear()

    def _end_section(self, events: list[Event], index: int) -> int:
        if self._calls == 0:
            events.append(
                ParseError(
                    "Could not read the deepseek tool call: the section holds no call.",
                    self._opening_marker,
                )
            )
        self.finished = True
        return index

    def finish(self, tail: str, events: list[Event]) -> str:
        # `tail` can only be the start of a marker that never completed: a fragment, dropped.
        if self._in_call:
            body = "".join(self._body) + tail
            events.append(
                ParseError(
                    "Could not read the deepseek tool call: the output ended inside it (cut off).",
                    self._call_begin + body,
                )
            )
        elif self._calls == 0:
            self._end_section(events, 0)
        return ""


def _read_tool_call(body: str) -> ParsedToolCall:
    before, sep, after = body.partition(SEP)
    if not sep:
        raise CallProblem(f"it has no {SEP} between the name and the arguments")
    if before.strip() == "function" and not after.lstrip().startswith("{"):
        name, _, arguments = after.partition("\n")  # V3: type, name, then a fenced json block
        fenced = _FENCE.fullmatch(arguments)
        arguments = fenced.group(1) if fenced else arguments
    else:
        name, arguments = before, after
    return call_from_fields(name, decode_arguments(arguments), None, None, "deepseek")


def _read_invoke(body: str) -> ParsedToolCall:
    header = _INVOKE_HEADER.match(body)
    if header is None:
        raise CallProblem('its invoke tag has no name="..."')
    rest = body[header.end() :]
    if header.group(2) and rest.strip():
        raise CallProblem(f"unexpected text after its self-closing invoke tag: {rest.strip()!r}")
    if rest.strip().startswith("{"):  # an invoke whose body is one JSON object
        return call_from_fields(header.group(1), decode_arguments(rest), None, None, "deepseek")
    arguments: dict[str, Any] = {}
    end = 0
    for parameter in _PARAMETER.finditer(rest):
        if rest[end : parameter.start()].strip():
            raise CallProblem(f"unexpected text in the invoke: {rest[end : parameter.start()].strip()!r}")
        key, is_string, value = parameter.groups()
        arguments[key] = value if is_string != "false" else _json_value(value)
        end = parameter.end()
    if rest[end:].strip():
        raise CallProblem(f"unexpected text in the invoke: {rest[end:].strip()!r}")
    return call_from_fields(header.group(1), arguments, None, None, "deepseek")


def _json_value(text: str) -> Any:
    try:
        return decode_json(text)
    except CallProblem:
        return text


class DeepSeekFormat(CallFormat):
    name = "deepseek"
    opening_markers = (*CALLS_BEGINS, *DSML_BEGINS, *INVOKE_BEGINS)
    stray_markers = (CALLS_END, CALL_END, *DSML_ENDS, *INVOKE_ENDS)
    end_of_turn_markers = (END_OF_SENTENCE,)
    call_noun = "<｜tool▁calls▁begin｜> section"
    call_instructions = (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>, the tool's name, <｜tool▁sep｜>, its arguments as "
        "one JSON object matching the tool's parameters, then <｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        # `<` only occurs inside JSON strings: escaped there, a marker in an argument cannot end the call.
        body = json.dumps(dict(arguments), ensure_ascii=False).replace("<｜", "\\u003c｜")
        return f"{CALLS_BEGIN}{CALL_BEGIN}{name}{SEP}{body}{CALL_END}{CALLS_END}"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return _DeepSeekReader(marker)
