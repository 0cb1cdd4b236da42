"""Kimi K3's channel markup ("XTML"), read as part of the `kimi` dialect (docs/dialects.md#kimi).

    <|open|>think<|sep|>...reasoning...<|close|>think<|sep|>
    <|open|>response<|sep|>Checking.<|close|>response<|sep|>
    <|open|>tools<|sep|>
    <|open|>call tool="get_weather" index="1"<|sep|>
    <|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>
    <|open|>argument key="days" type="integer"<|sep|>3<|close|>argument<|sep|>
    <|close|>call<|sep|>
    <|close|>tools<|sep|>

The `think` channel is a reasoning pair of the stream parser (the template opens it in the prompt, so
K3 is `reasoning_open=True`). The `response`, `message` and `tools` wrappers are dropped, their text is
content. Any other tag is read here, from `<|open|>` or `<|close|>` to `<|sep|>`: a `call` reads its
`argument` elements up to `<|close|>call<|sep|>`; any other tag is dropped. A value of `type="string"`
is kept exactly; any other type is JSON, and its text when it is not (no type: JSON if it reads as
JSON). Attribute values unescape `&quot;` and `&amp;`.

K3 gives only an `index`; the call id is then `functions.NAME:INDEX`, the form K2 writes, so one id
shape serves the whole family (no index: no id, toolbridge makes one up). The arguments are not JSON
text as they arrive: they come as one JSON delta with the call.
"""

from __future__ import annotations

import enum
import json
import re
from typing import Any

from toolbridge.parsing._calls import CallProblem, call_from_fields
from toolbridge.parsing._events import Event, ParsedToolCall
from toolbridge.parsing._format import CallReader, MarkerMatch, match_marker, read_to_marker

__all__ = ["K3_CLOSE", "K3_OPEN", "K3_REASONING", "K3_SEP", "K3_WRAPPERS", "K3Reader"]

K3_OPEN = "<|open|>"
K3_CLOSE = "<|close|>"
K3_SEP = SEP = "<|sep|>"
K3_REASONING = (f"{K3_OPEN}think{SEP}", f"{K3_CLOSE}think{SEP}")
K3_WRAPPERS = tuple(
    f"{tag}{channel}{SEP}" for channel in ("response", "message", "tools") for tag in (K3_OPEN, K3_CLOSE)
)
_ATTRIBUTE = re.compile(r'([\w-]+)\s*=\s*"([^"]*)"')
_ENTITY = re.compile(r"&(quot|amp);")
_NON_WHITESPACE = re.compile(r"\S")
_TAG_STOP = re.compile(r"[<\n]")


class _State(enum.Enum):
    TAG = enum.auto()
    """The opening tag's text, up to `<|sep|>`."""
    BETWEEN = enum.auto()
    """In a call, between its elements: an `argument` or `<|close|>call<|sep|>` comes next."""
    ARGUMENT_TAG = enum.auto()
    VALUE = enum.auto()
    CLOSE_TAG = enum.auto()
    """After a value's `<|close|>`: `argument<|sep|>`."""
    CALL_CLOSE_TAG = enum.auto()


def _unescape(value: str) -> str:
    return _ENTITY.sub(lambda m: '"' if m.group(1) == "quot" else "&", value)


def _attributes(tag: str) -> dict[str, str]:
    return {key: _unescape(value) for key, value in _ATTRIBUTE.findall(tag)}


def _typed(value: str, type_name: str | None) -> Any:
    if type_name == "string":
        return value
    try:
        return json.loads(value, strict=False)
    except (ValueError, RecursionError):  # not JSON, or nested past the stack: the text as written
        return value


class K3Reader(CallReader):
    format_name = "kimi"

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._state = _State.TAG
        self._tag: list[str] = []
        self._raw: list[str] = [opening_marker]
        self._name = ""
        self._id: str | None = None
        self._key = ""
        self._type: str | None = None
        self._value: list[str] = []
        self._arguments: dict[str, Any] = {}

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n and not self.finished and self.rejected_text is None:
            state = self._state
            if state is _State.VALUE:
                index, outcome = read_to_marker(text, pos, K3_CLOSE, self._value)
                self._raw.append(text[pos:index])
                if outcome is MarkerMatch.FULL:
                    self._raw.append(K3_CLOSE)
                    self._state = _State.CLOSE_TAG
                    index += len(K3_CLOSE)
                pos = index
            elif state is _State.BETWEEN:
                pos = self._between(text, pos, events)
            else:
                pos = self._read_tag(text, pos, events)
            if pos < n and self._state is state and not self.finished and self.rejected_text is None:
                return pos  # held back: might be a marker
        return pos

    def _read_tag(self, text: str, pos: int, events: list[Event]) -> int:
        """A tag's text up to `<|sep|>` (tags are one line, with no other marker in them)."""
        while (found := _TAG_STOP.search(text, pos)) is not None:
            index = found.start()
            self._tag.append(text[pos:index])
            self._raw.append(text[pos:index])
            if text[index] == "<":
                outcome = match_marker(text, index, SEP)
                if outcome is MarkerMatch.PARTIAL:
                    return index
                if outcome is MarkerMatch.FULL:
                    self._raw.append(SEP)
                    tag, self._tag = "".join(self._tag), []
                    self._tag_read(tag.strip(), events)
                    return index + len(SEP)
                if not text.startswith("<|", index):
                    self._tag.append("<")
                    self._raw.append("<")
                    pos = index + 1
                    continue
            return self._broken_tag(index, events)
        self._tag.append(text[pos:])
        self._raw.append(text[pos:])
        return len(text)

    def _tag_read(self, tag: str, events: list[Event]) -> None:
        state = self._state
        if state is _State.TAG:
            kind = tag.split(None, 1)[0] if tag else ""
            if self._opening_marker != K3_OPEN or kind != "call":
                self.finished = True  # another channel's wrapper: dropped, its text is content
                return
            attributes = _attributes(tag)
            self._name = attributes.get("tool", "").strip()
            index = attributes.get("index")
            self._id = f"functions.{self._name}:{index}" if index and self._name else None
            if self._name:
                self._announce(self._name, events)
            self._state = _State.BETWEEN
        elif state is _State.ARGUMENT_TAG:
            if tag.split(None, 1)[:1] != ["argument"]:
                self._fail(f"it holds an unknown element {tag!r}", events)
                return
            attributes = _attributes(tag)
            self._key, self._type = attributes.get("key", ""), attributes.get("type")
            self._state = _State.VALUE
        elif state is _State.CLOSE_TAG:
            self._arguments[self._key] = _typed("".join(self._value), self._type)
            self._value.clear()
            self._state = _State.BETWEEN
            if tag == "call":  # the argument's own close was left out
                self._end(events)
            elif tag != "argument":
                self._fail(f"an argument ends with {K3_CLOSE}{tag}{SEP}", events)
        elif tag == "call":  # CALL_CLOSE_TAG
            self._end(events)
        else:
            self._fail(f"it ends with {K3_CLOSE}{tag}{SEP}, not {K3_CLOSE}call{SEP}", events)

    def _between(self, text: str, pos: int, events: list[Event]) -> int:
        match = _NON_WHITESPACE.search(text, pos)
        if match is None:
            self._raw.append(text[pos:])
            return len(text)
        index = match.start()
        self._raw.append(text[pos:index])
        for marker, state in ((K3_OPEN, _State.ARGUMENT_TAG), (K3_CLOSE, _State.CALL_CLOSE_TAG)):
            outcome = match_marker(text, index, marker)
            if outcome is MarkerMatch.PARTIAL:
                return index
            if outcome is MarkerMatch.FULL:
                self._raw.append(marker)
                self._state = state
                return index + len(marker)
        self._fail(f"it holds text outside its elements ({K3_CLOSE}call{SEP} left out?)", events)
        return index  # that text is output again

    def _broken_tag(self, index: int, events: list[Event]) -> int:
        """A tag that ends before `<|sep|>` (a new line or another marker)."""
        if self._state is _State.TAG and self._opening_marker == K3_OPEN:
            tag = "".join(self._tag)
            if tag.split(None, 1)[:1] == ["call"]:
                self._fail(f"its tag has no {SEP}", events)
            elif tag.strip():
                self.rejected_text = tag  # a stray marker in prose: the text after it stays
            else:
                self.finished = True
        elif self._state is _State.TAG:
            self.finished = True  # a stray <|close|>: dropped
        else:
            self._fail(f"a tag in it has no {SEP}", events)
        return index

    def _end(self, events: list[Event]) -> None:
        def build() -> ParsedToolCall:
            if not self._name:
                raise CallProblem('its call tag has no tool="..."')
            return call_from_fields(self._name, dict(self._arguments), self._id, None, self.format_name)

        self.finished = True
        self._complete(lambda: self._with_arguments_delta(build(), events), "".join(self._raw), events)

    def _with_arguments_delta(self, call: ParsedToolCall, events: list[Event]) -> ParsedToolCall:
        self._announce(call.name, events)
        self._arguments_text(json.dumps(call.arguments, ensure_ascii=False), events)
        return call

    def _fail(self, reason: str, events: list[Event]) -> None:
        def build() -> ParsedToolCall:
            raise CallProblem(reason)

        self._complete(build, "".join(self._raw), events)

    def finish(self, tail: str, events: list[Event]) -> str:
        # `tail` can only be the start of a marker that never completed: a fragment, dropped.
        if self._state is _State.TAG and self._opening_marker == K3_OPEN:
            if "".join(self._tag).split(None, 1)[:1] != ["call"]:
                return ""  # a wrapper's tag cut off: nothing to show
        elif self._state is _State.TAG:
            return ""
        self._fail("the output ended before the call was complete (cut off)", events)
        return ""
