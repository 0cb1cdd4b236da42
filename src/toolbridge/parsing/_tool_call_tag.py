"""`<tool_call>` opens three dialects, and the body decides which (docs/dialects.md, "disambiguation"):

    <tool_call>{"name": "f", "arguments": {...}}</tool_call>                   hermes: `{`
    <tool_call><function=f><parameter=k>v</parameter></function></tool_call>   qwen3_xml: `<function=`
    <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>        glm: a name

Every format that opens calls with `<tool_call>` starts a `ToolCallTagReader`, so `qwen3_xml` still reads
a JSON body a model wrote instead, and `auto` reads all three. It waits for the first visible text of the
body (while that is a prefix of `<function=`, or a name not yet followed by white space or `<`) and hands
the body to that dialect's reader. Anything else is what hermes reads as "not a JSON object": an error
that ends at `</tool_call>`. The call's `format` is the dialect of its body.

`TaggedBodyReader` is what the qwen3_xml and glm readers share: bare-text values typed by the tool's
schema, arguments streamed as JSON text as each value completes, a body that breaks the dialect read up
to `</tool_call>` and reported, and a value that never ends cut at a `</tool_call>` inside it when the
output ends, so that the text after it is still read.
"""

from __future__ import annotations

import json
import re
from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, Literal

from toolbridge._values import value_problem
from toolbridge.parsing._calls import CallProblem, call_from_fields
from toolbridge.parsing._events import Event, ParseError, ToolCallEnd
from toolbridge.parsing._format import CallReader, MarkerMatch, ReadContext, match_any, match_marker
from toolbridge.parsing._typed_values import typed_value

__all__ = [
    "CLOSE",
    "OPEN",
    "TaggedBodyReader",
    "ToolCallTagReader",
    "ValueReader",
    "skip_space",
]

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
FUNCTION_OPEN = "<function="
MAX_NAME = 256
"""Characters a tool or parameter name may have: the longest text held back while a dialect is decided."""

_NON_WHITESPACE = re.compile(r"\S")
_NAME = re.compile(rf"[\w.:\-]{{1,{MAX_NAME}}}")

Dialect = Literal["hermes", "qwen3_xml", "glm"]


def skip_space(text: str, pos: int) -> int:
    """The index of the first visible character at or after `pos`, or len(text)."""
    match = _NON_WHITESPACE.search(text, pos)
    return len(text) if match is None else match.start()


def body_dialect(text: str, index: int) -> Dialect | None:
    """Which dialect the body starting at `text[index]` (visible) is; None while the text can't tell."""
    char = text[index]
    if char in "{[":
        return "hermes"
    if char == "<":
        outcome = match_marker(text, index, FUNCTION_OPEN)
        if outcome is MarkerMatch.FULL:
            return "qwen3_xml"
        return None if outcome is MarkerMatch.PARTIAL else "hermes"
    name = _NAME.match(text, index)
    if name is None:
        return "hermes"
    end = name.end()
    if end == len(text):
        return None if end - index < MAX_NAME else "hermes"
    return "glm" if text[end] == "<" or text[end].isspace() else "hermes"


class ToolCallTagReader(CallReader):
    """Reads a call opened by `<tool_call>`: decides the dialect from the body, then lets its reader read."""

    format_name = "hermes"

    def __init__(self, opening_marker: str, context: ReadContext) -> None:
        super().__init__(opening_marker)
        self._context = context
        self._body: CallReader | None = None

    def read_char(self, char: str) -> list[Event] | None:
        body = self._body
        return None if body is None else body.read_char(char)

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        body = self._body
        if body is None:
            index = skip_space(text, pos)
            if index == len(text):
                return index  # white space before the body is layout, not kept
            dialect = body_dialect(text, index)
            if dialect is None:
                return index  # held back until the body shows its dialect
            body = self._body = self._start(dialect)
            pos = index
        end = body.read(text, pos, events)
        self.finished = body.finished
        self.rejected_text = body.rejected_text
        return end

    def finish(self, tail: str, events: list[Event]) -> str:
        body = self._body
        if body is None:  # the output ended before the body showed its dialect: not a call
            body = self._start("hermes")
            index = skip_space(tail, 0)
            tail = tail[body.read(tail, index, events) :] if index < len(tail) else ""
        leftover = body.finish(tail, events)
        self.rejected_text = body.rejected_text
        return leftover

    def _start(self, dialect: Dialect) -> CallReader:
        # The dialect modules import this one for their formats' `start_call`, hence the late import.
        from toolbridge.parsing import _glm, _hermes, _qwen3_xml

        if dialect == "qwen3_xml":
            return _qwen3_xml.Qwen3XmlReader(self._opening_marker, self._context)
        if dialect == "glm":
            return _glm.GlmReader(self._opening_marker, self._context)
        return _hermes.HermesReader(self._opening_marker)


class ValueReader:
    """The text of one value, up to its closing tag (`</parameter>`, `</arg_value>`).

    Values are code as often as not, so the closing tag may be in the value itself: it ends the value
    only when, after optional white space, one of `followers` comes (the next parameter, the end of the
    call). Otherwise it was part of the value. `line_starts` end a value without its closing tag when
    they begin a line (Qwen3 models sometimes leave `</parameter>` out).
    """

    def __init__(self, close: str, followers: tuple[str, ...], line_starts: tuple[str, ...] = ()) -> None:
        self.parts: list[str] = []
        self._close = close
        self._followers = followers
        self._line_starts = line_starts
        self._after_close: list[str] | None = None
        """The closing tag and the white space after it, while it is not known whether it ends the value."""

    def read(self, text: str, pos: int) -> tuple[int, bool]:
        """Read from `text[pos]`: (where the next tag starts, True) once the value is complete;
        (len(text), False) when all was read; (index, False): hold `text[index:]` back, it may be a tag."""
        parts = self.parts
        n = len(text)
        while pos < n:
            if self._after_close is not None:
                index = skip_space(text, pos)
                self._after_close.append(text[pos:index])
                if index == n:
                    return n, False
                found = match_any(text, index, self._followers)
                if found is MarkerMatch.PARTIAL:
                    return index, False
                if isinstance(found, str):
                    self._after_close = None
                    return index, True
                parts += self._after_close  # a look-alike: the tag was part of the value
                self._after_close = None
                pos = index
                continue
            index = text.find("<", pos)
            if index < 0:
                parts.append(text[pos:])
                return n, False
            parts.append(text[pos:index])
            outcome = match_marker(text, index, self._close)
            if outcome is MarkerMatch.FULL:
                self._after_close = [self._close]
                pos = index + len(self._close)
                continue
            if outcome is MarkerMatch.PARTIAL:
                return index, False
            if self._line_starts and self._at_line_start():
                found = match_any(text, index, self._line_starts)
                if found is MarkerMatch.PARTIAL:
                    return index, False
                if isinstance(found, str):
                    return index, True
            parts.append("<")
            pos = index + 1
        return n, False

    def read_char(self, char: str) -> bool:
        """Take one character that cannot begin a tag; False if it needs the general path."""
        if char == "<" or self._after_close is not None:
            return False
        self.parts.append(char)
        return True

    def text(self) -> str:
        return "".join(self.parts)

    @property
    def closed(self) -> bool:
        """The closing tag came (and only white space since): at the end of the output, the value ended."""
        return self._after_close is not None

    def _at_line_start(self) -> bool:
        for part in reversed(self.parts):
            if part:
                return part.endswith("\n")
        return False


class TaggedBodyReader(CallReader):
    """What the qwen3_xml and glm readers share. A subclass reads its markup in `_read` and calls
    `_set_name`, `_add_argument`, `_fail` (the body breaks the dialect), `_end_call` and `_free_text_from`.
    """

    def __init__(self, opening_marker: str, context: ReadContext) -> None:
        super().__init__(opening_marker)
        self._context = context
        self._raw: list[str] = []
        self._raw_length = 0
        self._text = ""
        self._read_start = 0
        """The text being read, and where this read began in it: the raw text not yet in `_raw`."""
        self._name: str | None = None
        self._arguments: dict[str, Any] = {}
        self._problem: str | None = None
        self._free_text_start: int | None = None
        """Where in the raw body text began that only a closing tag ends (a value, a key)."""
        self._closing_tag = CLOSE
        """The tag a body that breaks the dialect is read up to (`</function>` for a Qwen3 call
        written without `<tool_call>`)."""

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        self._text = text
        self._read_start = pos
        end = self._skip(text, pos, events) if self._problem is not None else self._read(text, pos, events)
        self._raw.append(text[pos:end])
        self._raw_length += end - pos
        return end

    @abstractmethod
    def _read(self, text: str, pos: int, events: list[Event]) -> int:
        """Read the markup from `text[pos]`, as `CallReader.read`."""

    @abstractmethod
    def _complete_at_end(self, events: list[Event]) -> bool:
        """The output ended: whether the body read so far is a whole call but for `</tool_call>` (then
        with its last value added)."""

    def _set_name(self, name: str, events: list[Event]) -> None:
        self._name = name.strip()
        if self._name:
            self._announce(self._name, events)

    def _add_argument(self, key: str, text: str, events: list[Event]) -> bool:
        """A complete value: typed by the parameter's schema, and streamed as a piece of JSON. False
        (and `_fail`) when the value is unfit to use."""
        value = self._typed_value(text, self._context.parameter_schema(self._name or "", key))
        if problem := value_problem({key: value}):
            self._fail(f"the arguments {problem}")
            return False
        piece = json.dumps(key, ensure_ascii=False) + ": " + json.dumps(value, ensure_ascii=False)
        self._arguments_text(", " + piece if self._arguments else "{" + piece, events)
        self._arguments[key] = value
        return True

    def _typed_value(self, text: str, schema: Mapping[str, Any] | None) -> Any:
        """A value's text as the value it stands for (a dialect may know more ways of writing one)."""
        return typed_value(text, schema)

    def _free_text_from(self, index: int | None) -> None:
        """Text from `index` (in the text being read) on is free text; None: it ended."""
        self._free_text_start = None if index is None else self._raw_length + index - self._read_start

    def _end_call(self, events: list[Event], end: int | None = None) -> None:
        """The call is complete (up to `end` in the text being read; None: all read): emit it, or the
        error that makes it none."""
        self._arguments_text("}" if self._arguments else "{}", events)
        raw = self._current_raw(end)
        try:
            call = call_from_fields(self._name, self._arguments, None, None, self.format_name)
        except CallProblem as problem:
            events.append(ParseError(f"Could not read the {self.format_name} tool call: {problem}.", raw))
            return
        self._announce(call.name, events)
        events.append(ToolCallEnd(call))

    def _next_call(self) -> None:
        """Another call follows in the same block (after `_end_call`)."""
        self._name = None
        self._arguments = {}
        self._started = False

    def _fail(self, problem: str) -> None:
        """The body breaks the dialect: it is read up to its closing tag and reported."""
        self._problem = problem

    def _skip(self, text: str, pos: int, events: list[Event]) -> int:
        close = self._closing_tag
        index = text.find(close, pos)
        if index >= 0:
            end = index + len(close)
            self._report(self._current_raw(end), events)
            self.finished = True
            return end
        n = len(text)
        for size in range(min(len(close) - 1, n - pos), 0, -1):
            if text.endswith(close[:size]):
                return n - size  # held back: might be the start of the closing tag
        return n

    def _current_raw(self, end: int | None) -> str:
        current = "" if end is None else self._text[self._read_start : end]
        return self._opening_marker + "".join(self._raw) + current

    def _report(self, raw: str, events: list[Event]) -> None:
        events.append(ParseError(f"Could not read the {self.format_name} tool call: {self._problem}.", raw))

    def finish(self, tail: str, events: list[Event]) -> str:
        # `tail` can only be the start of a tag that never completed: part of the raw text, nothing more.
        body = "".join(self._raw)
        if self._problem is None and self._complete_at_end(events):
            self._end_call(events)
            return ""
        if self._problem is None and self._free_text_start is not None:
            closing_tag = self._closing_tag
            close = body.find(closing_tag, self._free_text_start)
            if close >= 0:
                # A value that never ended swallowed the closing tag: cut there, read the rest as output.
                self._problem = "a value is not closed"
                self._report(self._opening_marker + body[: close + len(closing_tag)], events)
                return body[close + len(closing_tag) :] + tail
        if self._problem is None:
            self._problem = "the output ended inside it"
        self._report(self._opening_marker + body + tail, events)
        return ""
