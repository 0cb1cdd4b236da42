"""`glm`: GLM-4.5 to 5.x calls (docs/dialects.md#glm), with or without the newlines of GLM-4.5/4.6:

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Paris</arg_value>
    </tool_call>
    <tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>

The name runs from `<tool_call>` to the first white space or `<`. Values are bare text, kept exactly
(white space around the tags is layout) and typed by the tool's schema (`_typed_values`). GLM-4.6 and
4.7 also write a value as JSON text (`json_written_value`): a string in quotes with its escapes
(`"a \\"quoted\\" text"`), or an object or array with its quotes escaped (`{\\"a\\": 1}`). A value may
hold `</arg_value>` itself: it ends the value only when the next `<arg_key>` or `</tool_call>` follows.
Reasoning is `<think>` (prompt-opened from GLM-4.7 on), the stream parser's own. The end-of-turn tokens
`<|observation|>`, `<|user|>` and `<|endoftext|>` are dropped. The body decides the dialect
(`_tool_call_tag`): asked for `glm`, a hermes JSON body is read too.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._events import Event
from toolbridge.parsing._format import (
    CallFormat,
    CallReader,
    MarkerMatch,
    ReadContext,
    match_any,
    match_marker,
)
from toolbridge.parsing._tool_call_tag import (
    CLOSE,
    OPEN,
    TaggedBodyReader,
    ToolCallTagReader,
    ValueReader,
    skip_space,
)
from toolbridge.parsing._typed_values import typed_value, value_text

__all__ = ["GlmFormat", "GlmReader", "json_written_value"]

KEY_OPEN = "<arg_key>"
KEY_CLOSE = "</arg_key>"
VALUE_OPEN = "<arg_value>"
VALUE_CLOSE = "</arg_value>"
END_OF_TURN = ("<|observation|>", "<|user|>", "<|endoftext|>")

_NEXT = (KEY_OPEN, CLOSE, OPEN)
"""What may follow the name or a value (a new `<tool_call>`: this one's end was left out)."""
_NAME_END = re.compile(r"[\s<]")
_LENIENT_JSON = json.JSONDecoder(strict=False)
_STRING_SCHEMA = {"type": "string"}


def json_written_value(text: str, schema: Mapping[str, Any] | None) -> Any:
    """A value's text typed by `schema`, also when GLM wrote it as JSON text.

    A whole JSON string (`"Paris"`, `"a \\"b\\""`) stands for its contents, which are then typed: for a
    string parameter too, as SGLang's GLM-4.7 reader does (a string that really is in quotes is written
    by `format_call` as JSON, so it reads back). An object or array that is not JSON but is once its
    escaped quotes are unescaped (`{\\"a\\": 1}`) is that object, where the schema (or no schema) allows
    one. A string parameter's text with escapes but no enclosing quotes stays as written: it is code
    (`echo \\"hi\\"`) as often as not.
    """
    word = text.strip()
    if len(word) >= 2 and word[0] == '"' == word[-1]:
        try:
            inner = json.loads(word)
        except ValueError:
            inner = None
        if isinstance(inner, str):
            return typed_value(inner, schema)
    value = typed_value(text, schema)
    if isinstance(value, str) and word[:1] in ("{", "[") and '\\"' in word:
        try:
            unescaped = _LENIENT_JSON.decode('"' + word + '"')
        except ValueError:
            return value
        decoded = typed_value(unescaped, schema)
        if isinstance(decoded, dict | list):
            return decoded
    return value


class _State(enum.Enum):
    NAME = enum.auto()
    BETWEEN = enum.auto()
    """After the name or a value: the next `<arg_key>`, or `</tool_call>`."""
    KEY = enum.auto()
    BEFORE_VALUE = enum.auto()
    VALUE = enum.auto()


class GlmReader(TaggedBodyReader):
    format_name = "glm"

    def __init__(self, opening_marker: str, context: ReadContext) -> None:
        super().__init__(opening_marker, context)
        self._state = _State.NAME
        self._key_parts: list[str] = []
        """The key being read."""
        self._key = ""
        self._value = ValueReader(VALUE_CLOSE, _NEXT)

    def read_char(self, char: str) -> list[Event] | None:
        if self._state is not _State.VALUE or not self._value.read_char(char):
            return None
        self._raw.append(char)
        self._raw_length += 1
        return []

    def _read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n and not self.finished:
            state = self._state
            if state is _State.NAME:
                # The body decided for glm by a short name followed by white space or `<`: all here.
                match = _NAME_END.search(text, pos)
                assert match is not None
                self._set_name(text[pos : match.start()], events)
                self._state = _State.BETWEEN
                pos = match.start()
                continue
            if state is _State.KEY:
                index = text.find("<", pos)
                while index >= 0 and match_marker(text, index, KEY_CLOSE) is MarkerMatch.NONE:
                    index = text.find("<", index + 1)
                if index < 0:
                    self._key_parts.append(text[pos:])
                    return n
                self._key_parts.append(text[pos:index])
                if match_marker(text, index, KEY_CLOSE) is MarkerMatch.PARTIAL:
                    return index
                self._key = "".join(self._key_parts).strip()
                self._key_parts.clear()
                self._free_text_from(None)
                self._state = _State.BEFORE_VALUE
                pos = index + len(KEY_CLOSE)
                continue
            if state is _State.VALUE:
                index, done = self._value.read(text, pos)
                if not done:
                    return index
                self._free_text_from(None)
                self._state = _State.BETWEEN
                if not self._add_argument(self._key, self._value.text(), events):
                    return self._skip(text, index, events)
                pos = index
                continue
            index = skip_space(text, pos)
            if index == n:
                return n
            expected = (VALUE_OPEN,) if state is _State.BEFORE_VALUE else _NEXT
            found = match_any(text, index, expected)
            if found is MarkerMatch.PARTIAL:
                return index
            if found is MarkerMatch.NONE:
                where = f"the key {self._key!r}" if state is _State.BEFORE_VALUE else self._where()
                self._fail(f"expected {' or '.join(expected[:2])} after {where}")
                return self._skip(text, index, events)
            pos = index + len(found) if isinstance(found, str) else index
            if found == KEY_OPEN:
                self._state = _State.KEY
                self._free_text_from(pos)
            elif found == VALUE_OPEN:
                self._value = ValueReader(VALUE_CLOSE, _NEXT)
                self._free_text_from(pos)
                self._state = _State.VALUE
            else:  # </tool_call>, or a new <tool_call> when this one's end was left out
                end = pos if found == CLOSE else index
                self._end_call(events, end)
                self.finished = True
                return end
        return pos

    def _where(self) -> str:
        return f"the value of {self._key!r}" if self._arguments else f"the name {self._name!r}"

    def _typed_value(self, text: str, schema: Mapping[str, Any] | None) -> Any:
        return json_written_value(text, schema)

    def _complete_at_end(self, events: list[Event]) -> bool:
        return self._state is _State.BETWEEN


class GlmFormat(CallFormat):
    name = "glm"
    opening_markers = (OPEN,)
    stray_markers = (CLOSE,)
    end_of_turn_markers = END_OF_TURN
    call_noun = "<tool_call> block"
    call_instructions = (
        "<tool_call> directly followed by the tool's name, then each argument as "
        "<arg_key>NAME</arg_key><arg_value>VALUE</arg_value> (text as it is, objects and arrays as "
        "JSON), then </tool_call>"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """The GLM-4.5 template's form: the name, then one line per key and per value. A string that would
        read back as another value (one in quotes) is written as JSON."""
        lines = [f"{OPEN}{name}"]
        for key, value in arguments.items():
            text = value_text(value)
            if isinstance(value, str) and json_written_value(text, _STRING_SCHEMA) != value:
                text = json.dumps(value, ensure_ascii=False)  # a string in quotes: as JSON, to read back
            lines += [f"{KEY_OPEN}{key}{KEY_CLOSE}", f"{VALUE_OPEN}{text}{VALUE_CLOSE}"]
        return "\n".join(lines) + "\n" + CLOSE

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return ToolCallTagReader(marker, context)
