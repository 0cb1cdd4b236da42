"""`llama3_json`: Llama 3.1/3.2/3.3's calls, bare JSON objects (docs/dialects.md#llama3_json).

    {"name": "get_weather", "parameters": {"city": "Paris"}}
    <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "get_time", "parameters": {}}

`"arguments"` is taken for `"parameters"`, a `"type": "function"` key is ignored, and OpenAI's
`{"type": "function", "function": {...}}` is read too. Calls are separated by `;`; small Llama 3.2 models
also write several calls as one JSON list, `[{"name": ...}, {"name": ...}]`, read when the format is asked
for by name (a list whose first item is no call object is text). There is no closing
marker: a call ends, and is reported, where its JSON balances; `<|eom_id|>`/`<|eot_id|>` are dropped.

How a call is recognised without `<|python_tag|>`: `<|python_tag|>` opens a call everywhere (also in
`auto`), a bare `{` only when this format is asked for by name (the model's profile or config says it
writes this dialect), since JSON in prose is common. Even then the object is read as a call only if its
first key is one a call has (`name`, `type`, `function`, `tool_name`, `parameters`, `arguments`), and it
is a call only if it turns out to hold a string name and arguments; anything else is shown as the text it
was. After `<|python_tag|>` a body that is not JSON is a built-in tool's call, `brave_search.call(query=
"x")` (a call of `brave_search`), or else a `ParseError`. A call cut off by an end-of-turn token inside
its JSON is an error, never repaired into a call.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from toolbridge.parsing._calls import (
    ARGUMENT_KEYS,
    NAME_KEYS,
    CallProblem,
    call_from_fields,
    call_from_object,
    decode_json,
)
from toolbridge.parsing._events import Event, ParsedToolCall, ParseError, ToolCallArgumentsDelta, ToolCallEnd
from toolbridge.parsing._format import CallFormat, CallReader, MarkerMatch, ReadContext, match_marker
from toolbridge.parsing._json_scan import JsonScanner
from toolbridge.parsing._llama_pythonic import read_python_arguments

__all__ = ["Llama3JsonFormat"]

PYTHON_TAG = "<|python_tag|>"
OBJECT_OPEN = "{"
LIST_OPEN = "["
LIST_SEPARATOR = ","
LIST_CLOSE = "]"
END_OF_TURN = ("<|eom_id|>", "<|eot_id|>")
SEPARATOR = ";"
FORMAT_NAME = "llama3_json"
CALL_KEYS = ("name", "type", "function", "tool_name", "parameters", "arguments")
_KEY_PREFIXES = frozenset(f'"{key}"'[:i] for key in CALL_KEYS for i in range(1, len(key) + 3))
_NON_WHITESPACE = re.compile(r"\S")
_MAX_SPACE_BEFORE_SEPARATOR = 64
"""White space after a call beyond which a `;` no longer continues it (so holding it back is bounded)."""
_BUILT_IN_CALL = re.compile(r"\s*([^\W\d][\w.-]*)\((.*)\)\s*", re.DOTALL)


class _State(enum.Enum):
    LIST_START = enum.auto()
    """After a bare `[`: a call object must come first, or the list is text."""
    PROBE = enum.auto()
    """After a bare `{`: its first key decides whether it may be a call."""
    START = enum.auto()
    """After `<|python_tag|>`: a JSON object, or a built-in tool's call."""
    JSON = enum.auto()
    AFTER_CALL = enum.auto()
    """A call was read: a `;` means another follows, anything else ends the calls."""
    AFTER_SEPARATOR = enum.auto()
    BUILT_IN = enum.auto()
    """A `<|python_tag|>` body that is not JSON, read up to the end of the turn."""


def _end_of_turn(text: str, index: int) -> str | MarkerMatch:
    """The end-of-turn token at `text[index]`, PARTIAL if the text ends inside one, else NONE."""
    partial = False
    for marker in END_OF_TURN:
        outcome = match_marker(text, index, marker)
        if outcome is MarkerMatch.FULL:
            return marker
        partial = partial or outcome is MarkerMatch.PARTIAL
    return MarkerMatch.PARTIAL if partial else MarkerMatch.NONE


def _as_text(text: str) -> str:
    """An object that is no call, shown as text: without this dialect's tokens, which its strings may
    hold, since those are never content."""
    if "<|" not in text:
        return text
    for token in (PYTHON_TAG, *END_OF_TURN):
        text = text.replace(token, "")
    return text


def _is_call(value: Any) -> bool:
    """An object with a string name and arguments, the test a bare JSON object must pass."""
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("function"), dict):
        value = {**value, **value["function"]}
    has_name = any(isinstance(value.get(key), str) for key in NAME_KEYS)
    return has_name and any(isinstance(value.get(key), dict | str) for key in ARGUMENT_KEYS)


class _LlamaJsonReader(CallReader):
    format_name = FORMAT_NAME

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._tagged = opening_marker == PYTHON_TAG
        self._in_list = opening_marker == LIST_OPEN
        """Calls written as one JSON list: `,` separates them and `]` ends them."""
        self._state = _State.START if self._tagged else _State.LIST_START if self._in_list else _State.PROBE
        self._probe: list[str] = [OBJECT_OPEN]
        self._key = ""
        """The first key, from its opening quote, while probing."""
        self._separator: list[str] = [opening_marker] if self._in_list else []
        """The `;` or `,` (and white space) before this call, or the list's `[`: shown again if the object
        is not a call."""
        self._body: list[str] = []
        self._scanner = self._new_scanner()
        self._arguments_sent_to = 0
        self._arguments_open = False
        """The arguments value has begun, as an object (or a JSON string): a bare object is a call."""
        self._built_in: list[str] = []
        self._objects = 0
        """Objects begun after the first (each after a `;`)."""

    @staticmethod
    def _new_scanner() -> JsonScanner:
        return JsonScanner(stop_chars="<", name_keys=NAME_KEYS, argument_keys=ARGUMENT_KEYS)

    @property
    def _committed(self) -> bool:
        """Whether the object is taken as a call (an error if unreadable), not shown as text."""
        return self._tagged or self._started

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
        while pos < n and not self.finished and self.rejected_text is None:
            state = self._state
            if state is _State.JSON:
                pos = self._read_json(text, pos, events)
                if pos < n and self._state is _State.JSON and not self.finished:
                    return pos  # held back: might be an end-of-turn token
                continue
            if state is _State.PROBE:
                pos = self._read_probe(text, pos)
                continue
            if state is _State.BUILT_IN:
                pos = self._read_built_in(text, pos, events)
                if pos < n and not self.finished:
                    return pos
                continue
            match = _NON_WHITESPACE.search(text, pos)
            index = n if match is None else match.start()
            if state is _State.LIST_START:
                if match is None and index - pos < _MAX_SPACE_BEFORE_SEPARATOR:
                    return pos  # held back until the list's first item shows
                self._separator.append(text[pos:index])
                if match is None or text[index] != OBJECT_OPEN:
                    return self._reject(index, with_probe=False)
                self._begin_object(probe=True)
                pos = index + 1
                continue
            if state is not _State.START:
                # White space after a call is held back: it is the text's if no `;` follows.
                if index - pos >= _MAX_SPACE_BEFORE_SEPARATOR:
                    self.finished = True
                    return pos
                if match is None:
                    return pos
            elif match is None:
                return n
            char = text[index]
            if state is _State.AFTER_CALL:
                if self._in_list and char == LIST_CLOSE:
                    self.finished = True
                    return index + 1
                if char != (LIST_SEPARATOR if self._in_list else SEPARATOR):
                    self.finished = True
                    return pos
                self._state = _State.AFTER_SEPARATOR
                self._separator = [text[pos : index + 1]]
                pos = index + 1
                continue
            if state is _State.AFTER_SEPARATOR:
                if char != OBJECT_OPEN:
                    self.finished = True  # the `;` was only a separator
                    return pos
                self._separator.append(text[pos:index])
                self._begin_object(probe=not self._tagged)
                pos = index + 1 if not self._tagged else index
                continue
            # START, just after <|python_tag|>
            if char == OBJECT_OPEN:
                self._begin_object(probe=False)
            else:
                self._state = _State.BUILT_IN
            pos = index
        return pos

    def _begin_object(self, *, probe: bool) -> None:
        self._state = _State.PROBE if probe else _State.JSON
        self._probe = [OBJECT_OPEN]
        self._key = ""
        self._body = []
        self._scanner = self._new_scanner()
        self._arguments_sent_to = 0
        self._arguments_open = False
        self._objects += 1
        self.between_calls = False

    def _read_probe(self, text: str, pos: int) -> int:
        n = len(text)
        while pos < n:
            if not self._key:
                match = _NON_WHITESPACE.search(text, pos)
                if match is None:
                    self._probe.append(text[pos:])
                    return n
                index = match.start()
                self._probe.append(text[pos:index])
                if text[index] != '"':
                    return self._reject(index)
                self._key = '"'
                self._probe.append('"')
                pos = index + 1
                continue
            key = self._key + text[pos]
            if key not in _KEY_PREFIXES:
                return self._reject(pos)
            self._key = key
            self._probe.append(text[pos])
            pos += 1
            if len(key) > 1 and key.endswith('"'):  # a call's key: read the object as JSON
                probe = "".join(self._probe)
                self._state = _State.JSON
                self._body = [probe]
                self._scanner.scan(probe, 0)
                return pos
        return pos

    def _reject(self, index: int, *, with_probe: bool = True) -> int:
        """Not a call: the object's text so far is shown as text, and reading resumes at `index`."""
        self.rejected_text = "".join(self._separator) + ("".join(self._probe) if with_probe else "")
        return index

    def _read_json(self, text: str, pos: int, events: list[Event]) -> int:
        scanner = self._scanner
        while True:
            before = scanner.offset
            arguments_seen = scanner.arguments_start is not None
            end = scanner.scan(text, pos)
            self._body.append(text[pos:end])
            if not arguments_seen and scanner.arguments_start is not None:
                self._arguments_open = text[pos + scanner.arguments_start - before] in '{"'
            if scanner.name is not None and (self._tagged or self._arguments_open):
                self._announce(scanner.name, events)
            self._stream_arguments(text, pos, before, events)
            if scanner.done:
                self._end_object("".join(self._body), events)
                return end
            if not scanner.stopped:
                return end
            if not self._committed:
                # No JSON has '<' outside strings: prose (or markup) with braces, shown as it was.
                self.rejected_text = _as_text("".join(self._separator) + "".join(self._body))
                return end
            marker = _end_of_turn(text, end)
            if marker is MarkerMatch.PARTIAL:
                return end
            if isinstance(marker, str):
                self._cut_off("".join(self._body), events)
                return end  # the plain text drops the end-of-turn token
            scanner.step_over_stop()  # a '<' outside strings: broken JSON, read on
            self._body.append("<")
            self._stream_arguments(text, end, scanner.offset - 1, events)
            pos = end + 1

    def _stream_arguments(self, text: str, pos: int, before: int, events: list[Event]) -> None:
        """Send what was just scanned (from `text[pos]`, scanner offset `before`) inside the arguments."""
        start = self._scanner.arguments_start
        if start is None:
            return
        stop = self._scanner.arguments_end
        low = max(before, start, self._arguments_sent_to)
        high = self._scanner.offset if stop is None else min(self._scanner.offset, stop)
        if high > low:
            self._arguments_text(text[pos + low - before : pos + high - before], events)
            self._arguments_sent_to = high

    def _end_object(self, body: str, events: list[Event]) -> None:
        """The object balanced: a call, an error, or (a bare object that is no call) text."""
        if self._committed:
            self._report(lambda: call_from_object(decode_json(body), FORMAT_NAME), body, events)
            return
        try:
            value = decode_json(body)
        except CallProblem:
            value = None
        if not _is_call(value):
            self.rejected_text = _as_text("".join(self._separator) + body)
            return
        self._report(lambda: call_from_object(value, FORMAT_NAME), body, events)

    def _cut_off(self, body: str, events: list[Event]) -> None:
        """The turn ended inside the object."""
        if not self._committed:
            self.rejected_text = _as_text("".join(self._separator) + body)
            return
        self.finished = True
        message = f"Could not read the {FORMAT_NAME} tool call: the turn ended before its JSON was complete."
        events.append(ParseError(message, self._raw(body)))

    def _raw(self, body: str) -> str:
        return (PYTHON_TAG if self._tagged and self._objects <= 1 else "") + body

    def _report(self, build: Callable[[], ParsedToolCall], body: str, events: list[Event]) -> None:
        """One call read: it or its error, then wait for a `;` and another call."""
        try:
            call = build()
        except CallProblem as problem:
            message = f"Could not read the {FORMAT_NAME} tool call: {problem}."
            events.append(ParseError(message, self._raw(body)))
        else:
            announced = self._started
            self._announce(call.name, events)
            if not announced and self._scanner.arguments_start is None:
                events.append(ToolCallArgumentsDelta(json.dumps(call.arguments, ensure_ascii=False)))
            events.append(ToolCallEnd(call))
        self._started = False
        self._early_arguments.clear()
        self._state = _State.AFTER_CALL
        self.between_calls = True

    def _read_built_in(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while (index := text.find("<", pos)) >= 0:
            self._built_in.append(text[pos:index])
            marker = _end_of_turn(text, index)
            if marker is MarkerMatch.PARTIAL:
                return index
            if isinstance(marker, str):
                self._end_built_in(events)
                return index
            self._built_in.append("<")
            pos = index + 1
        self._built_in.append(text[pos:])
        return n

    def _end_built_in(self, events: list[Event]) -> None:
        body = "".join(self._built_in)

        def build() -> ParsedToolCall:
            call = _BUILT_IN_CALL.fullmatch(body)
            if call is None:
                raise CallProblem(
                    'after <|python_tag|> comes one JSON object, {"name": ..., "parameters": {...}}'
                )
            name = call.group(1).removesuffix(".call")
            return call_from_fields(name, read_python_arguments(call.group(2)), None, None, FORMAT_NAME)

        self._report(build, body, events)
        self.finished = True

    def finish(self, tail: str, events: list[Event]) -> str:
        state = self._state
        if state is _State.LIST_START:
            return self._reject_at_end(tail)
        if state is _State.PROBE:
            return self._reject_at_end("".join(self._probe) + tail)
        elif state is _State.START:
            events.append(ParseError(f"Could not read the {FORMAT_NAME} tool call: it is empty.", PYTHON_TAG))
        elif state is _State.BUILT_IN:
            self._built_in.append(tail)
            self._end_built_in(events)
        elif state is _State.JSON:
            body = "".join(self._body)
            if not self._committed:
                return self._reject_at_end(body + tail)
            if self._scanner.in_string:
                cuts = [index for marker in END_OF_TURN if (index := body.find(marker)) >= 0]
                if cuts:
                    # An unterminated string swallowed the end of the turn: cut there, read the rest again.
                    self._cut_off(body[: min(cuts)], events)
                    return body[min(cuts) :] + tail
            # Output ended inside the object: read only if all that is missing is its own last brace.
            whole = body + "}" if self._scanner.only_the_object_left_open else body
            self._report(lambda: call_from_object(decode_json(whole), FORMAT_NAME), body, events)
        return ""

    def _reject_at_end(self, text: str) -> str:
        """An object still open at the end is text; from its first '<' (in a string, perhaps a marker
        the string swallowed) it is read again."""
        cut = text.find("<")
        cut = len(text) if cut < 0 else cut
        self.rejected_text = "".join(self._separator) + text[:cut]
        return text[cut:]


class Llama3JsonFormat(CallFormat):
    name = FORMAT_NAME
    opening_markers = (PYTHON_TAG,)
    named_markers = (OBJECT_OPEN, LIST_OPEN)
    end_of_turn_markers = END_OF_TURN
    call_noun = "JSON call"
    call_instructions = (
        'one JSON object {"name": NAME, "parameters": {...}} with the tool\'s name and its arguments (an '
        'object matching the tool\'s parameters); separate several calls with ";"'
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return json.dumps({"name": name, "parameters": arguments}, ensure_ascii=False)

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return _LlamaJsonReader(marker)
