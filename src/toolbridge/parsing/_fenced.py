"""`fenced`: seed 001's block, a fence opened with three backticks and `tool`, one `label: value` per line.

    ```tool
    工具名称: get_current_time
    参数: {}
    ```

English labels (`name:`/`tool_name:`, `arguments:`/`parameters:`) and full-width colons work too, as do
`id:` and `source:` lines. The arguments JSON may span lines; it is followed by structure, so braces and
backticks inside its strings are data. A fence such as ```` ```tools ```` is not a call and stays text.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._calls import CallProblem, call_from_fields, decode_arguments
from toolbridge.parsing._events import Event, ParsedToolCall
from toolbridge.parsing._format import CallFormat, CallReader, MarkerMatch, ReadContext, match_marker
from toolbridge.parsing._json_scan import JsonScanner

__all__ = ["FencedFormat"]

OPEN = "```tool"
FENCE = "```"
_LABELS = {
    "工具名称": "name",
    "工具名": "name",
    "工具": "name",
    "name": "name",
    "tool_name": "name",
    "tool": "name",
    "参数": "arguments",
    "arguments": "arguments",
    "parameters": "arguments",
    "args": "arguments",
    "id": "id",
    "call_id": "id",
    "source": "source",
    "来源": "source",
}
_OPENING_LINE_END = re.compile(r"[^ \t\r]")
_LABEL_END = re.compile("[:：\n`]")
_VALUE_END = re.compile("[\n`]")


class _State(enum.Enum):
    OPENING = enum.auto()
    LABEL = enum.auto()
    VALUE = enum.auto()
    ARGUMENTS_START = enum.auto()
    ARGUMENTS_JSON = enum.auto()


_PATTERNS = {
    _State.OPENING: _OPENING_LINE_END,
    _State.LABEL: _LABEL_END,
    _State.VALUE: _VALUE_END,
    _State.ARGUMENTS_START: _OPENING_LINE_END,
}


class _FencedReader(CallReader):
    format_name = "fenced"

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._state = _State.OPENING
        self._raw: list[str] = []
        self._piece: list[str] = []  # the label or value being read
        self._field: str | None = None  # which field the current value belongs to
        self._fields: dict[str, str] = {}
        self._arguments: list[str] = []
        self._scanner: JsonScanner | None = None
        self._closed = False

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        end = self._read(text, pos, events)
        if self.rejected_text is None:
            self._raw.append(text[pos:end])
        if self._closed:
            self._complete_call("".join(self._arguments), events)
        return end

    def _read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n and not self._closed and self.rejected_text is None:
            state = self._state
            if state is _State.ARGUMENTS_JSON:
                pos = self._read_arguments_json(text, pos, events)
                if pos < n and self._state is _State.ARGUMENTS_JSON and not self._closed:
                    return pos  # held back: might be the closing fence
                continue
            match = _PATTERNS[state].search(text, pos)
            if match is None:
                if state is not _State.ARGUMENTS_START:
                    self._piece.append(text[pos:])
                return n
            index = match.start()
            char = text[index]
            if state is not _State.ARGUMENTS_START:
                self._piece.append(text[pos:index])
            if char == "`":
                outcome = match_marker(text, index, FENCE)
                if outcome is MarkerMatch.PARTIAL:
                    return index
                if outcome is MarkerMatch.FULL and state is not _State.OPENING:
                    self._end_line(events)
                    self._closed = True
                    return index + len(FENCE)
            if state is _State.OPENING:
                if char != "\n":
                    self.rejected_text = self._opening_marker + "".join(self._piece)
                    return index
                self._piece.clear()
                self._state = _State.LABEL
            elif state is _State.ARGUMENTS_START:
                if char in "{[":
                    self._state = _State.ARGUMENTS_JSON
                    self._scanner = JsonScanner(stop_chars="`")
                else:  # arguments that are not JSON: keep the line, decide at the end
                    self._state = _State.VALUE
                    self._field = "arguments"
                pos = index
                continue
            elif char == "\n":
                self._end_line(events)
            elif char == "`":
                self._piece.append(char)
            else:  # the colon after a label
                label = "".join(self._piece).strip(" \t\r*-").lower()
                self._piece.clear()
                self._field = _LABELS.get(label)
                self._state = _State.ARGUMENTS_START if self._field == "arguments" else _State.VALUE
            pos = index + 1
        return pos

    def _end_line(self, events: list[Event]) -> None:
        """A line ended: store the value it carried."""
        if self._state is _State.VALUE and self._field is not None:
            value = "".join(self._piece).strip()
            if self._field == "arguments":
                self._arguments.append(value)
            elif value:
                self._fields.setdefault(self._field, value.strip("\"'`"))
                if self._field == "name":
                    self._announce(self._fields["name"], events)
        self._piece.clear()
        self._field = None
        self._state = _State.LABEL

    def _read_arguments_json(self, text: str, pos: int, events: list[Event]) -> int:
        scanner = self._scanner
        assert scanner is not None
        while True:
            end = scanner.scan(text, pos)
            if end > pos:
                self._arguments.append(text[pos:end])
                self._arguments_text(text[pos:end], events)
            if scanner.done:
                self._state = _State.VALUE  # the rest of the line is ignored
                self._field = None
                return end
            if not scanner.stopped:
                return end
            outcome = match_marker(text, end, FENCE)
            if outcome is MarkerMatch.FULL:
                self._closed = True
                return end + len(FENCE)
            if outcome is MarkerMatch.PARTIAL:
                return end
            scanner.step_over_stop()
            self._arguments.append("`")
            self._arguments_text("`", events)
            pos = end + 1

    def _complete_call(self, arguments: str, events: list[Event]) -> None:
        fields = self._fields

        def build() -> ParsedToolCall:
            if not fields.get("name"):
                raise CallProblem("the block has no `工具名称:` (or `name:`) line")
            decoded = decode_arguments(arguments)
            return call_from_fields(fields["name"], decoded, fields.get("id"), fields.get("source"), "fenced")

        self._complete(build, self._opening_marker + "".join(self._raw), events)

    def finish(self, tail: str, events: list[Event]) -> str:
        if self._state is _State.OPENING:
            self.rejected_text = self._opening_marker + "".join(self._piece) + tail
            return ""
        arguments = "".join(self._arguments)
        scanner = self._scanner
        if self._state is _State.ARGUMENTS_JSON and scanner is not None and scanner.in_string:
            fence = arguments.find(FENCE)
            if fence >= 0:
                # An unterminated string swallowed the closing fence: cut there, read the rest as output.
                self._complete_call(arguments[:fence], events)
                return arguments[fence + len(FENCE) :]
        self._end_line(events)
        self._complete_call("".join(self._arguments), events)
        return ""


class FencedFormat(CallFormat):
    name = "fenced"
    opening_markers = (OPEN,)
    call_noun = "```tool block"
    call_instructions = (
        "a ```tool block: a line `name: ` with the tool's name, then a line `arguments: ` with one JSON "
        "object matching the tool's parameters, then a closing ```"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return f"{OPEN}\nname: {name}\narguments: {json.dumps(arguments, ensure_ascii=False)}\n{FENCE}"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return _FencedReader(marker)
