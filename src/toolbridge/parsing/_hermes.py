"""`hermes`: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, the format toolbridge asks for.

Also accepted: the seeds' `tool_name`, `id` and `source` keys, `parameters` for `arguments`, arguments
given as a JSON string, a missing `</tool_call>` (the call then ends at the JSON's last brace), and a
missing last brace after whole arguments. A `</tool_call>` outside any JSON string ends the call; when
the arguments are not whole there (a brace or a string left open), the call is an error, never run. `<tool_call>` also
opens Qwen3 XML and GLM calls: the body decides which dialect reads it (`_tool_call_tag`).
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._calls import ARGUMENT_KEYS, NAME_KEYS, CallProblem, call_from_object, decode_json
from toolbridge.parsing._events import Event, ParsedToolCall
from toolbridge.parsing._format import (
    CallFormat,
    CallReader,
    MarkerMatch,
    ReadContext,
    match_marker,
    read_to_marker,
)
from toolbridge.parsing._json_scan import JsonScanner
from toolbridge.parsing._tool_call_tag import CLOSE, OPEN, ToolCallTagReader

__all__ = ["HermesFormat", "HermesReader"]

_NON_WHITESPACE = re.compile(r"\S")
_FENCED_JSON = re.compile(r"\s*```[a-z]*\s*(\{.*\})\s*```\s*", re.DOTALL)


class _State(enum.Enum):
    BEFORE_JSON = enum.auto()
    JSON = enum.auto()
    AFTER_JSON = enum.auto()
    NOT_JSON = enum.auto()
    """The body does not start with `{`: kept until `</tool_call>` and reported as an error."""


class HermesReader(CallReader):
    format_name = "hermes"

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._state = _State.BEFORE_JSON
        self._body: list[str] = []
        self._scanner = JsonScanner(stop_chars="<", name_keys=NAME_KEYS, argument_keys=ARGUMENT_KEYS)
        self._arguments_sent_to = 0

    def read_char(self, char: str) -> list[Event] | None:
        scanner = self._scanner
        if self._state is not _State.JSON or not scanner.consume_plain_char(char):
            return None
        self._body.append(char)
        events: list[Event] = []
        if scanner.in_arguments:
            self._arguments_text(char, events)
            self._arguments_sent_to = scanner.offset
        return events

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n and not self.finished:
            state = self._state
            if state is _State.JSON:
                pos = self._read_json(text, pos, events)
                if pos < n and self._state is _State.JSON and not self.finished:
                    return pos  # held back: might be the start of </tool_call>
                continue
            if state is _State.NOT_JSON:
                pos = self._read_not_json(text, pos, events)
                if pos < n and not self.finished:
                    return pos  # held back: might be the start of </tool_call>
                continue
            match = _NON_WHITESPACE.search(text, pos)
            if match is None:
                return n
            index = match.start()
            if state is _State.BEFORE_JSON:
                self._state = _State.JSON if text[index] in "{[" else _State.NOT_JSON
                pos = index
                continue
            outcome = match_marker(text, index, CLOSE)  # after the JSON: expect </tool_call>
            if outcome is MarkerMatch.PARTIAL:
                return index
            self._finish_json(events, closed=outcome is MarkerMatch.FULL)
            # Without a closing marker the call ends at its last brace; what follows is output.
            return index + len(CLOSE) if outcome is MarkerMatch.FULL else index
        return pos

    def _read_json(self, text: str, pos: int, events: list[Event]) -> int:
        scanner = self._scanner
        while True:
            before = scanner.offset
            end = scanner.scan(text, pos)
            self._body.append(text[pos:end])
            if scanner.name is not None:
                self._announce(scanner.name, events)
            self._stream_arguments(text, pos, before, events)
            if scanner.done:
                self._state = _State.AFTER_JSON
                return end
            if not scanner.stopped:
                return end
            outcome = match_marker(text, end, CLOSE)
            if outcome is MarkerMatch.FULL:
                self._finish_json(events, closed=True)
                return end + len(CLOSE)
            if outcome is MarkerMatch.PARTIAL:
                return end
            # A '<' outside strings that is not </tool_call>: broken JSON, read on.
            before = scanner.offset
            scanner.step_over_stop()
            self._body.append("<")
            self._stream_arguments(text, end, before, events)
            pos = end + 1

    def _stream_arguments(self, text: str, pos: int, before: int, events: list[Event]) -> None:
        """Send the part of what was just scanned (from `text[pos]`, offset `before`) inside the arguments."""
        start = self._scanner.arguments_start
        if start is None:
            return
        stop = self._scanner.arguments_end
        low = max(before, start, self._arguments_sent_to)
        high = self._scanner.offset if stop is None else min(self._scanner.offset, stop)
        if high > low:
            self._arguments_text(text[pos + low - before : pos + high - before], events)
            self._arguments_sent_to = high

    def _read_not_json(self, text: str, pos: int, events: list[Event]) -> int:
        """Read the body up to `</tool_call>`."""
        index, outcome = read_to_marker(text, pos, CLOSE, self._body)
        if outcome is MarkerMatch.FULL:
            self._report_not_json(events, closed=True)
            return index + len(CLOSE)
        return index

    def _finish_json(self, events: list[Event], *, closed: bool, body: str | None = None) -> None:
        written = "".join(self._body) if body is None else body
        raw = self._opening_marker + written + (CLOSE if closed else "")
        if body is None and self._scanner.only_the_object_left_open:
            written += "}"
        self._complete(lambda: call_from_object(decode_json(written), self.format_name), raw, events)

    def _report_not_json(self, events: list[Event], *, closed: bool) -> None:
        body = "".join(self._body)
        raw = self._opening_marker + body + (CLOSE if closed else "")

        def build() -> ParsedToolCall:
            fenced = _FENCED_JSON.fullmatch(body)
            if fenced is not None:  # some models wrap the JSON in a ```json fence inside the tags
                return call_from_object(decode_json(fenced.group(1)), self.format_name)
            reason = "it is empty" if not body.strip() else "its body is not a JSON object"
            raise CallProblem(f'{reason}; write <tool_call>{{"name": ..., "arguments": {{...}}}}</tool_call>')

        self._complete(build, raw, events)

    def finish(self, tail: str, events: list[Event]) -> str:
        # `tail` can only be the start of a </tool_call> that never completed: a marker fragment, dropped.
        if self._state is _State.JSON and self._scanner.in_string:
            body = "".join(self._body)
            close = body.find(CLOSE)
            if close >= 0:
                # An unterminated string swallowed the closing marker: cut there, read the rest as output.
                self._finish_json(events, closed=True, body=body[:close])
                return body[close + len(CLOSE) :]
        if self._state in (_State.JSON, _State.AFTER_JSON):
            self._finish_json(events, closed=False)
        else:
            self._report_not_json(events, closed=False)
        return ""


class HermesFormat(CallFormat):
    name = "hermes"
    opening_markers = (OPEN,)
    stray_markers = (CLOSE,)
    end_of_turn_markers = ("<|im_end|>", "<|endoftext|>")
    call_noun = "<tool_call> block"
    call_instructions = (
        'a <tool_call> block holding one JSON object with the tool\'s "name" and its "arguments" '
        "(an object matching the tool's parameters)"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        return f"{OPEN}{body}{CLOSE}"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return ToolCallTagReader(marker, context)  # the body decides: JSON, or Qwen3 XML or GLM
