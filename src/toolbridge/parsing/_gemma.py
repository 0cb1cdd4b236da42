"""`gemma`: Gemma 4's tool-call tokens and object notation (docs/dialects.md#gemma-gemma-4).

    <|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3,opts:{exact:true},tags:[<|"|>x<|"|>]}<tool_call|>

Keys are bare; strings are enclosed in the string-delimiter token `<|"|>`, inside which everything is
literal (`,`, `}`, quotes, even `<tool_call|>`); numbers, `true`/`false`/`null` are bare, and any other
bare value is kept as a string. JSON strings in `"` are taken too. Parallel calls are consecutive
blocks. A call is reported when `<tool_call|>` arrives; without it, where its braces balance.

Reasoning is the thought channel `<|channel>thought` ... `<channel|>` (the parser's per-format
reasoning markers); `<turn|>` (end of turn), a stray `<tool_call|>` and a `<|"|>` outside a call are
dropped. No call id.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge._values import MAX_NESTING
from toolbridge.parsing._calls import CallProblem, call_from_fields, call_from_object, decode_json
from toolbridge.parsing._events import Event, ParsedToolCall
from toolbridge.parsing._format import CallFormat, CallReader, MarkerMatch, ReadContext, match_marker

__all__ = ["GemmaFormat", "read_gemma_object"]

OPEN = "<|tool_call>"
CLOSE = "<tool_call|>"
QUOTE = '<|"|>'
END_OF_TURN = "<turn|>"
THOUGHT_OPEN = "<|channel>thought"
THOUGHT_CLOSE = "<channel|>"
FORMAT_NAME = "gemma"

_HEADER = re.compile(r"\s*(?:call\s*:)?\s*([^\s{}:]+)\s*")
_IN_HEADER = re.compile(r"[{<]")
_OUTSIDE_STRING = re.compile(r"[<{}\[\]]")
_NON_WHITESPACE = re.compile(r"\S")
_BARE_KEY = re.compile(r"[A-Za-z_][\w.-]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_BARE_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
# Where the call can end, outside strings: its own end, or markers that show the end was left out.
_ENDINGS = (CLOSE, END_OF_TURN, OPEN)


class _State(enum.Enum):
    HEADER = enum.auto()
    """`call:NAME`, up to the `{` of the arguments."""
    BODY = enum.auto()
    AFTER_BODY = enum.auto()
    """The braces balanced: `<tool_call|>` is expected."""


class _GemmaReader(CallReader):
    format_name = FORMAT_NAME

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._state = _State.HEADER
        self._header: list[str] = []
        self._body: list[str] = []
        self._depth = 0
        self._in_string = False
        self._name = ""

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n and not self.finished:
            state = self._state
            if state is _State.HEADER:
                pos = self._read_header(text, pos, events)
            elif state is _State.BODY:
                pos = self._read_body(text, pos, events)
            else:
                match = _NON_WHITESPACE.search(text, pos)
                if match is None:
                    return n
                index = match.start()
                outcome = match_marker(text, index, CLOSE)
                if outcome is MarkerMatch.PARTIAL:
                    return index
                self._end(events, closed=outcome is MarkerMatch.FULL)
                return index + len(CLOSE) if outcome is MarkerMatch.FULL else index
            if pos < n and not self.finished and self._state is state:
                return pos  # held back: might be a marker
        return pos

    def _ending_at(self, text: str, index: int) -> str | MarkerMatch:
        partial = False
        for marker in _ENDINGS:
            outcome = match_marker(text, index, marker)
            if outcome is MarkerMatch.FULL:
                return marker
            partial = partial or outcome is MarkerMatch.PARTIAL
        return MarkerMatch.PARTIAL if partial else MarkerMatch.NONE

    def _read_header(self, text: str, pos: int, events: list[Event]) -> int:
        while (match := _IN_HEADER.search(text, pos)) is not None:
            index = match.start()
            self._header.append(text[pos:index])
            if text[index] == "{":
                header = _HEADER.fullmatch("".join(self._header))
                if header is not None:
                    self._name = header.group(1)
                    self._announce(self._name, events)
                self._state = _State.BODY
                return index
            ending = self._ending_at(text, index)
            if ending is MarkerMatch.PARTIAL:
                return index
            if isinstance(ending, str):
                self._end(events, closed=ending == CLOSE)
                return index + len(CLOSE) if ending == CLOSE else index
            self._header.append("<")
            pos = index + 1
        self._header.append(text[pos:])
        return len(text)

    def _read_body(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        start = pos
        while pos < n:
            if self._in_string:
                index = text.find("<", pos)
            else:
                match = _OUTSIDE_STRING.search(text, pos)
                index = -1 if match is None else match.start()
            if index < 0:
                pos = n
                break
            char = text[index]
            if char == "<":
                outcome = match_marker(text, index, QUOTE)
                if outcome is MarkerMatch.FULL:
                    self._in_string = not self._in_string
                    pos = index + len(QUOTE)
                    continue
                ending = MarkerMatch.NONE if self._in_string else self._ending_at(text, index)
                if outcome is MarkerMatch.PARTIAL or ending is MarkerMatch.PARTIAL:
                    self._add_body(text[start:index], events)
                    return index
                if isinstance(ending, str):
                    self._add_body(text[start:index], events)
                    self._end(events, closed=ending == CLOSE)
                    return index + len(CLOSE) if ending == CLOSE else index
                pos = index + 1
            elif char in "{[":
                self._depth += 1
                pos = index + 1
            else:
                self._depth -= 1
                pos = index + 1
                if self._depth <= 0:
                    self._state = _State.AFTER_BODY
                    break
        self._add_body(text[start:pos], events)
        return pos

    def _add_body(self, piece: str, events: list[Event]) -> None:
        if piece:
            self._body.append(piece)
            self._arguments_text(piece, events)

    def _end(self, events: list[Event], *, closed: bool) -> None:
        header = "".join(self._header)
        body = "".join(self._body)
        raw = self._opening_marker + header + body + (CLOSE if closed else "")

        def build() -> ParsedToolCall:
            if not self._name:
                if not header.strip() and body.lstrip().startswith("{"):
                    try:  # a model that wrote a JSON call object between Gemma's markers
                        return call_from_object(decode_json(body), FORMAT_NAME)
                    except CallProblem:
                        pass
                raise CallProblem("it does not start with call:NAME{")
            arguments = read_gemma_object(body)
            return call_from_fields(self._name, arguments, None, None, FORMAT_NAME)

        self._complete(build, raw, events)

    def finish(self, tail: str, events: list[Event]) -> str:
        body = "".join(self._body)
        if self._state is _State.BODY and self._in_string:
            cut = body.find(CLOSE)
            if cut >= 0:
                # An unterminated string swallowed the end of the call: cut there, read the rest again.
                self._body = [body[:cut]]
                self._end(events, closed=True)
                return body[cut + len(CLOSE) :] + tail
        self._end(events, closed=False)
        return ""


class _ObjectReader:
    """Gemma's object notation, read whole (the call's text is complete when this runs)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> CallProblem:
        near = self.text[self.pos : self.pos + 20]
        return CallProblem(f"{what} at {near!r}" if near else f"{what} at the end")

    def skip_space(self) -> None:
        match = _NON_WHITESPACE.search(self.text, self.pos)
        self.pos = len(self.text) if match is None else match.start()

    def value(self, depth: int) -> Any:
        if depth > MAX_NESTING:
            raise CallProblem(f"its arguments are nested more than {MAX_NESTING} levels deep")
        self.skip_space()
        text = self.text
        if text.startswith(QUOTE, self.pos):
            end = text.find(QUOTE, self.pos + len(QUOTE))
            if end < 0:
                raise self.fail(f"a string opened with {QUOTE} is not closed")
            value = text[self.pos + len(QUOTE) : end]
            self.pos = end + len(QUOTE)
            return value
        char = text[self.pos : self.pos + 1]
        if char == "{":
            return self.object(depth)
        if char == "[":
            return self.array(depth)
        if char == '"':
            try:
                value, self.pos = json.JSONDecoder(strict=False).raw_decode(text, self.pos)
            except ValueError:
                raise self.fail("a string is not closed") from None
            return value
        return self.bare()

    def bare(self) -> Any:
        """A number, true/false/null, or any other bare text (kept as a string)."""
        start = self.pos
        end = start
        text = self.text
        while end < len(text) and text[end] not in ",}]" and not text.startswith(QUOTE, end):
            end += 1
        self.pos = end
        word = text[start:end].strip()
        if not word:
            raise self.fail("a value is missing")
        if word in _BARE_LITERALS:
            return _BARE_LITERALS[word]
        if _NUMBER.fullmatch(word):
            number = float(word) if any(c in word for c in ".eE") else int(word)
            if isinstance(number, float) and number in (float("inf"), float("-inf")):
                raise self.fail("a number is too large")
            return number
        return word

    def key(self) -> str:
        self.skip_space()
        text = self.text
        if text.startswith(QUOTE, self.pos) or text.startswith('"', self.pos):
            key = self.value(0)
            if not isinstance(key, str):
                raise self.fail("a key is not a string")
            return key
        colon = text.find(":", self.pos)
        if colon < 0:
            raise self.fail("a key has no ':' after it")
        key = text[self.pos : colon].strip()
        if not key or any(c in key for c in ",{}[]"):
            raise self.fail("a key is missing")
        self.pos = colon
        return key

    def expect(self, char: str) -> None:
        self.skip_space()
        if not self.text.startswith(char, self.pos):
            raise self.fail(f"expected {char!r}")
        self.pos += 1

    def object(self, depth: int) -> dict[str, Any]:
        self.expect("{")
        result: dict[str, Any] = {}
        self.skip_space()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return result
        while True:
            key = self.key()
            self.expect(":")
            result[key] = self.value(depth + 1)
            self.skip_space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.skip_space()
                if self.text.startswith("}", self.pos):  # a trailing comma
                    self.pos += 1
                    return result
                continue
            self.expect("}")
            return result

    def array(self, depth: int) -> list[Any]:
        self.expect("[")
        result: list[Any] = []
        self.skip_space()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return result
        while True:
            result.append(self.value(depth + 1))
            self.skip_space()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                self.skip_space()
                if self.text.startswith("]", self.pos):
                    self.pos += 1
                    return result
                continue
            self.expect("]")
            return result


def read_gemma_object(text: str) -> dict[str, Any]:
    """The arguments `{key:value,...}` in Gemma's notation (empty text: no arguments)."""
    if not text.strip():
        return {}
    reader = _ObjectReader(text)
    reader.skip_space()
    if not text.startswith("{", reader.pos):
        raise reader.fail("the arguments must be an object {key:value,...}")
    value = reader.object(0)
    reader.skip_space()
    if reader.pos < len(text):
        raise reader.fail("unexpected text after the arguments")
    return value


def gemma_value(value: Any) -> str:
    """`value` (JSON-like) in Gemma's notation."""
    if isinstance(value, str):
        return f"{QUOTE}{value}{QUOTE}"
    if isinstance(value, Mapping):
        items = (f"{_gemma_key(str(key))}:{gemma_value(item)}" for key, item in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(gemma_value(item) for item in value) + "]"
    return json.dumps(value)


def _gemma_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else f"{QUOTE}{key}{QUOTE}"


class GemmaFormat(CallFormat):
    name = FORMAT_NAME
    opening_markers = (OPEN,)
    stray_markers = (CLOSE, QUOTE)
    end_of_turn_markers = (END_OF_TURN,)
    reasoning_markers = ((THOUGHT_OPEN, THOUGHT_CLOSE),)
    call_noun = "<|tool_call> block"
    call_instructions = (
        f"{OPEN}call:NAME{{key:value,...}}{CLOSE} with the tool's name and its arguments in object "
        f"notation: bare keys, every string value between {QUOTE} and {QUOTE}, numbers, true, false and "
        "null bare, [...] for lists and {...} for objects"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return f"{OPEN}call:{name}{gemma_value(dict(arguments))}{CLOSE}"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return _GemmaReader(marker)
