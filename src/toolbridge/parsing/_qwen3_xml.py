"""`qwen3_xml`: Qwen3-Coder's and Qwen3.5's XML calls (docs/dialects.md#qwen3_xml).

    <tool_call>
    <function=get_weather>
    <parameter=city>
    Paris
    </parameter>
    <parameter=days>
    3
    </parameter>
    </function>
    </tool_call>

Values are bare text: the newline the template writes after `<parameter=KEY>` and the one before
`</parameter>` are removed (one each, nothing more), then the value is typed by the tool's schema
(`_typed_values`). Code in a value may hold `</parameter>` itself: it ends the value only when the next
parameter, `</function>` or `</tool_call>` follows it. A `</parameter>` left out before a `<parameter=` or
`</function>` at the start of a line is tolerated, and so are a left-out `</function>` and several
functions in one block. Qwen3.5's `<think>` is the stream parser's own; `<|im_end|>` is dropped.

Qwen3-Coder and Qwen3.5 also leave `<tool_call>` out (and then often `</tool_call>` too): `<function=NAME>`
opens a call by itself. Since `<function=f>` also appears in prose, such a call is only one once a
`<parameter=` or `</function>` follows its tag; until then nothing is announced, and anything else
shows the text as it was. At the end of the output, a call whose last value is closed (`</parameter>`)
is complete without `</function>` and `</tool_call>`, with or without the opener.
The body decides the dialect (`_tool_call_tag`): asked for `qwen3_xml`, a hermes JSON body is read too.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._events import Event
from toolbridge.parsing._format import CallFormat, CallReader, MarkerMatch, ReadContext, match_any
from toolbridge.parsing._tool_call_tag import (
    CLOSE,
    MAX_NAME,
    OPEN,
    TaggedBodyReader,
    ToolCallTagReader,
    ValueReader,
    skip_space,
)
from toolbridge.parsing._typed_values import value_text

__all__ = ["Qwen3XmlFormat", "Qwen3XmlReader"]

FUNCTION_OPEN = "<function="
FUNCTION_CLOSE = "</function>"
PARAMETER_OPEN = "<parameter="
PARAMETER_CLOSE = "</parameter>"
END_OF_TURN = ("<|im_end|>", "<|endoftext|>")

_IN_FUNCTION = (PARAMETER_OPEN, FUNCTION_CLOSE, CLOSE, OPEN)
_AFTER_FUNCTION = (CLOSE, FUNCTION_OPEN, OPEN)
_AFTER_VALUE = (PARAMETER_OPEN, FUNCTION_CLOSE, CLOSE, OPEN)
_TAG_END = re.compile(r"[>\n<]")


class _State(enum.Enum):
    START = enum.auto()
    """Before `<function=` (the body starts with it: the dialect was decided by it)."""
    FUNCTION_NAME = enum.auto()
    IN_FUNCTION = enum.auto()
    """Between parameters: the next `<parameter=`, or `</function>`."""
    PARAMETER_NAME = enum.auto()
    VALUE = enum.auto()
    AFTER_FUNCTION = enum.auto()


class Qwen3XmlReader(TaggedBodyReader):
    format_name = "qwen3_xml"

    def __init__(self, opening_marker: str, context: ReadContext) -> None:
        super().__init__(opening_marker, context)
        self._state = _State.START
        self._tag: list[str] = []
        self._tag_length = 0
        self._key = ""
        self._value = ValueReader(PARAMETER_CLOSE, _AFTER_VALUE)
        self._unopened = opening_marker == FUNCTION_OPEN
        """Opened by `<function=` itself, with no `<tool_call>` before it."""
        self._committed = not self._unopened
        """Known to be a call: for one without `<tool_call>`, once `<parameter=` or `</function>` came."""
        self._function_name = ""
        if self._unopened:
            self._state = _State.FUNCTION_NAME
            self._closing_tag = FUNCTION_CLOSE

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
            if state is _State.VALUE:
                index, done = self._value.read(text, pos)
                if not done:
                    return index
                if not self._end_value(events):
                    return self._skip(text, index, events)
                pos = index
                continue
            if state in (_State.FUNCTION_NAME, _State.PARAMETER_NAME):
                pos = self._read_tag_name(text, pos, events)
                if self.rejected_text is not None:
                    return pos
                if self._problem is not None:
                    return self._skip(text, pos, events)
                continue
            index = skip_space(text, pos)
            if index == n:
                return n
            if state is _State.START:
                self._state = _State.FUNCTION_NAME  # the body starts with `<function=`
                pos = index + len(FUNCTION_OPEN)
                continue
            found = match_any(text, index, _IN_FUNCTION if state is _State.IN_FUNCTION else _AFTER_FUNCTION)
            if found is MarkerMatch.PARTIAL:
                return index
            if not self._committed:
                if found not in (PARAMETER_OPEN, FUNCTION_CLOSE):  # `<function=f>` in prose
                    return self._reject(index)
                self._committed = True
                self._set_name(self._function_name, events)
            if found is MarkerMatch.NONE:
                if state is _State.AFTER_FUNCTION:  # no </tool_call>: the call ends at </function>
                    return self._end(events, index)
                self._fail(f"expected {PARAMETER_OPEN}NAME> or {FUNCTION_CLOSE} after {self._where()}")
                return self._skip(text, index, events)
            assert isinstance(found, str)
            if found == CLOSE:
                return self._end(events, index + len(CLOSE))
            if found == OPEN:  # a new call: this one's end was left out
                return self._end(events, index)
            pos = index + len(found)
            if found == PARAMETER_OPEN:
                self._state = _State.PARAMETER_NAME
            elif found == FUNCTION_CLOSE:
                self._state = _State.AFTER_FUNCTION
                self.between_calls = self._unopened  # no </tool_call> to wait for: the call is whole
            else:  # another function in the same block
                self._end_call(events, index)
                self._next_call()
                self._state = _State.FUNCTION_NAME
                self.between_calls = False
        return pos

    def _read_tag_name(self, text: str, pos: int, events: list[Event]) -> int:
        """The NAME of `<function=NAME>` or `<parameter=NAME>`, up to `>`."""
        match = _TAG_END.search(text, pos)
        end = len(text) if match is None else match.start()
        self._tag.append(text[pos:end])
        self._tag_length += end - pos
        if self._tag_length > MAX_NAME or (match is not None and text[end] != ">"):
            if not self._committed:
                return self._reject(end)
            tag = FUNCTION_OPEN if self._state is _State.FUNCTION_NAME else PARAMETER_OPEN
            self._fail(f"its {tag}NAME> tag is not closed with >")
            return end
        if match is None:
            return end
        name = "".join(self._tag)
        self._tag.clear()
        self._tag_length = 0
        if self._state is _State.FUNCTION_NAME:
            if self._committed:
                self._set_name(name, events)
            else:
                self._function_name = name
            self._state = _State.IN_FUNCTION
        else:
            self._key = name.strip()
            self._value = ValueReader(PARAMETER_CLOSE, _AFTER_VALUE, (PARAMETER_OPEN, FUNCTION_CLOSE))
            self._free_text_from(end + 1)
            self._state = _State.VALUE
        return end + 1

    def _where(self) -> str:
        return f"the value of {self._key!r}" if self._arguments else f"{FUNCTION_OPEN}{self._name}>"

    def _end_value(self, events: list[Event]) -> bool:
        text = self._value.text()
        text = text[1:] if text.startswith("\n") else text  # the template's own newlines
        text = text[:-1] if text.endswith("\n") else text
        self._free_text_from(None)
        self._state = _State.IN_FUNCTION
        return self._add_argument(self._key, text, events)

    def _end(self, events: list[Event], index: int) -> int:
        self._end_call(events, index)
        self.finished = True
        return index

    def _reject(self, index: int) -> int:
        """`<function=` without `<tool_call>` that turned out to be no call: its text is shown."""
        self.rejected_text = self._current_raw(index)
        return index

    def _complete_at_end(self, events: list[Event]) -> bool:
        state = self._state
        if state is _State.VALUE and self._value.closed:
            return self._end_value(events)  # `</function>` and `</tool_call>` left out
        return state is _State.AFTER_FUNCTION or (state is _State.IN_FUNCTION and bool(self._arguments))

    def finish(self, tail: str, events: list[Event]) -> str:
        if not self._committed:
            self.rejected_text = self._opening_marker + "".join(self._raw) + tail
            return ""
        return super().finish(tail, events)


class Qwen3XmlFormat(CallFormat):
    name = "qwen3_xml"
    opening_markers = (OPEN, FUNCTION_OPEN)
    stray_markers = (CLOSE,)
    end_of_turn_markers = END_OF_TURN
    call_noun = "<tool_call> block"
    call_instructions = (
        "a <tool_call> block holding <function=TOOL_NAME>, then each argument as <parameter=NAME>, its "
        "value, </parameter> (text as it is, objects and arrays as JSON), then </function>, each tag on "
        "its own line"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """The Qwen3-Coder template's form: each tag on its own line."""
        lines = [OPEN, f"{FUNCTION_OPEN}{name}>"]
        for key, value in arguments.items():
            lines += [f"{PARAMETER_OPEN}{key}>", value_text(value), PARAMETER_CLOSE]
        lines += [FUNCTION_CLOSE, CLOSE]
        return "\n".join(lines)

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        if marker == FUNCTION_OPEN:
            return Qwen3XmlReader(marker, context)
        return ToolCallTagReader(marker, context)
