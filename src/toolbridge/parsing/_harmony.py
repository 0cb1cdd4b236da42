"""`harmony`: gpt-oss's message markup (docs/dialects.md#harmony-gpt-oss).

    <|channel|>analysis<|message|>Need the weather.<|end|>
    <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>
    <|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>
    <|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>

(one line each in the model's output). A message is a header, `<|message|>`, a body and an end token.
The `analysis` channel is reasoning: `<|channel|>analysis<|message|>` ... `<|end|>` is a reasoning pair
of the stream parser, so a generation prompt that ends inside it is `reasoning_open=True` (one that ends
in `<|start|>assistant` is not). An output may also start inside the header of a call (`IN_HEADER`,
looked for only there). Every other header is read here, from `<|channel|>` or `<|start|>` to
`<|message|>`: a header with a recipient (`to=...`, after the role or after the channel, on any channel)
makes the body a call; one without (`final`, a `commentary` preamble) ends the reader at once, and the
body is content. `<|start|>ROLE`, `<|end|>`, `<|call|>`, `<|return|>` are never shown.

The call's name is the recipient without `functions.`; a built-in recipient (`browser.search`,
`python`) is reported whole, as a call of that name: whether such a tool exists is the agent's to say,
like any unknown tool. The body is JSON whether or not the header says `<|constrain|>json` (or ` json`);
only `python`, whose body is code, takes a body that is not JSON, as `{"code": body}`. A call ends at
`<|call|>` (or `<|end|>`, `<|return|>`), or where the next message begins when the end was left out,
or at the end of the output (servers stop at `<|call|>` and drop it). Harmony gives no call id.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._calls import CallProblem, call_from_fields, decode_arguments
from toolbridge.parsing._events import Event, ParsedToolCall
from toolbridge.parsing._format import (
    CallFormat,
    CallReader,
    MarkerMatch,
    ReadContext,
    match_any,
)
from toolbridge.parsing._json_scan import JsonScanner

__all__ = ["HarmonyFormat"]

START = "<|start|>"
CHANNEL = "<|channel|>"
CONSTRAIN = "<|constrain|>"
MESSAGE = "<|message|>"
END = "<|end|>"
CALL = "<|call|>"
RETURN = "<|return|>"
ANALYSIS = f"{CHANNEL}analysis{MESSAGE}"
IN_HEADER = ("to=functions.", "commentary to=functions.", "analysis to=functions.")
"""How an output starts that begins inside a call's header: the prompt ended in `<|start|>assistant`
(` to=functions.NAME<|channel|>commentary json<|message|>...`, as llama.cpp reads it) or in its
`<|channel|>` (`commentary to=functions.NAME <|constrain|>json<|message|>...`)."""

_CLOSES = (CALL, END, RETURN)
_NEXT_MESSAGE = (START, CHANNEL)
"""A call whose end token was left out ends where the next message begins; that header is read again."""
_IN_BODY = (*_CLOSES, *_NEXT_MESSAGE)
_IN_HEADER = (MESSAGE, CHANNEL, CONSTRAIN, *_CLOSES, START)
_RECIPIENT = re.compile(r"\bto=(\S+?)(?=\s|<\||$)")
_NON_WHITESPACE = re.compile(r"\S")
_HEADER_STOP = re.compile(r"[<\n]")


class _State(enum.Enum):
    HEADER = enum.auto()
    """From the opening marker to `<|message|>`."""
    BEFORE_BODY = enum.auto()
    JSON = enum.auto()
    AFTER_JSON = enum.auto()
    NOT_JSON = enum.auto()
    """A body that does not start with `{`: kept until its end token, then decoded or reported."""


def recipient(header: str) -> str | None:
    """The `to=...` of a header (role part and channel part together), if it has one."""
    found = _RECIPIENT.search(header)
    return found.group(1) if found else None


def tool_name(to: str) -> str:
    return to.removeprefix("functions.")


class _HarmonyReader(CallReader):
    format_name = "harmony"

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._state = _State.HEADER
        self._header: list[str] = []
        self._in_role = opening_marker in (START, IN_HEADER[0])
        """Still in `<|start|>ROLE ...`, before any `<|channel|>`."""
        self._marker_in_header = opening_marker in IN_HEADER
        """Opened by `to=functions.` and the like at the start of the output: the marker is header text."""
        if self._marker_in_header:
            self._header.append(opening_marker)
        self._recipient: str | None = None
        self._body: list[str] = []
        self._scanner = JsonScanner(stop_chars="<")

    def read_char(self, char: str) -> list[Event] | None:
        if self._state is not _State.JSON or not self._scanner.consume_plain_char(char):
            return None
        self._body.append(char)
        events: list[Event] = []
        self._arguments_text(char, events)
        return events

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n and not self.finished and self.rejected_text is None:
            state = self._state
            if state is _State.HEADER:
                pos = self._read_header(text, pos, events)
            elif state is _State.JSON:
                pos = self._read_json(text, pos, events)
            elif state is _State.NOT_JSON:
                pos = self._read_not_json(text, pos, events)
            else:
                pos = self._after_whitespace(text, pos, events)
            if pos < n and self._state is state and not self.finished and self.rejected_text is None:
                return pos  # held back: might be a marker
        return pos

    def _read_header(self, text: str, pos: int, events: list[Event]) -> int:
        while (found := _HEADER_STOP.search(text, pos)) is not None:
            index = found.start()
            self._header.append(text[pos:index])
            if text[index] == "\n":  # headers are one line: this was no message header
                return self._broken_header(index, events)
            marker = match_any(text, index, _IN_HEADER)
            if marker is MarkerMatch.PARTIAL:
                return index
            if marker is MarkerMatch.NONE:  # no `<` in a header: another dialect's tag, say
                return self._broken_header(index, events)
            header = "".join(self._header)
            if marker == CHANNEL and self._in_role:
                self._in_role = False
                if recipient(header) is None:
                    # `<|start|>assistant<|channel|>...`: the role is dropped and the channel header is
                    # read again from plain text, where `<|channel|>analysis<|message|>` opens reasoning.
                    self.finished = True
                    return index
            if marker == MESSAGE:
                return self._header_read(header, index + len(MESSAGE), events)
            if marker in (CHANNEL, CONSTRAIN):
                self._header.append(marker)
                pos = index + len(marker)
                continue
            return self._broken_header(index, events)  # an end token or a new message: no body
        self._header.append(text[pos:])
        return len(text)

    def _header_read(self, header: str, pos: int, events: list[Event]) -> int:
        self._recipient = recipient(header)
        if self._recipient is None:
            self.finished = True  # a final answer or a preamble: its body is content
            return pos
        self._announce(tool_name(self._recipient), events)
        self._state = _State.BEFORE_BODY
        return pos

    def _broken_header(self, index: int, events: list[Event]) -> int:
        """A header that ends before `<|message|>`: a broken call, or no message at all."""
        header = "".join(self._header)
        if recipient(header) is not None:
            self._report(events, "its header has no <|message|> before the arguments")
        elif self._opening_marker == CHANNEL and header.strip():
            # A stray <|channel|> in prose: the text after it stays (without markers).
            self.rejected_text = header.replace(CHANNEL, "").replace(CONSTRAIN, "")
        else:
            self.finished = True  # `<|start|>assistant` alone, and the like: dropped
        return index

    def _after_whitespace(self, text: str, pos: int, events: list[Event]) -> int:
        match = _NON_WHITESPACE.search(text, pos)
        if match is None:
            return len(text)
        index = match.start()
        if self._state is _State.BEFORE_BODY:
            if text[index] in "{[":
                self._state = _State.JSON
                return index
            found = match_any(text, index, _IN_BODY)
            if found is MarkerMatch.PARTIAL:
                return index
            if isinstance(found, str):  # no body at all
                return self._end_at(found, index, events)
            self._state = _State.NOT_JSON
            return index
        found = match_any(text, index, _IN_BODY)  # after the JSON: expect <|call|>
        if found is MarkerMatch.PARTIAL:
            return index
        if isinstance(found, str):
            return self._end_at(found, index, events)
        self._finish_call(events, closed=False)  # text after the JSON: the call ended at its brace
        return index

    def _end_at(self, marker: str, index: int, events: list[Event]) -> int:
        """End the call at `marker`: an end token is consumed, a new message's header is read again."""
        closed = marker in _CLOSES
        self._finish_call(events, closed=closed, close=marker)
        return index + len(marker) if closed else index

    def _read_json(self, text: str, pos: int, events: list[Event]) -> int:
        def at_stop(index: int) -> int | None:
            found = match_any(text, index, _IN_BODY)
            if isinstance(found, str):
                return self._end_at(found, index, events)
            return index if found is MarkerMatch.PARTIAL else None

        end = self._read_json_arguments(self._scanner, text, pos, self._body, events, at_stop)
        if self._scanner.done:
            self._state = _State.AFTER_JSON
        return end

    def _read_not_json(self, text: str, pos: int, events: list[Event]) -> int:
        while (index := text.find("<", pos)) >= 0:
            self._body.append(text[pos:index])
            found = match_any(text, index, _IN_BODY)
            if isinstance(found, str):
                return self._end_at(found, index, events)
            if found is MarkerMatch.PARTIAL:
                return index
            self._body.append("<")
            pos = index + 1
        self._body.append(text[pos:])
        return len(text)

    def _raw(self, body: str, close: str) -> str:
        message = MESSAGE if self._state is not _State.HEADER else ""
        opening = "" if self._marker_in_header else self._opening_marker
        return opening + "".join(self._header) + message + body + close

    def _finish_call(
        self, events: list[Event], *, closed: bool, close: str = "", body: str | None = None
    ) -> None:
        body = "".join(self._body) if body is None else body
        to = self._recipient or ""

        def build() -> ParsedToolCall:
            if self._state is _State.NOT_JSON and body.strip():
                if to != "python":
                    raise CallProblem("its arguments are not a JSON object")
                return ParsedToolCall(name=to, arguments={"code": body}, format=self.format_name)
            return call_from_fields(tool_name(to), decode_arguments(body), None, None, self.format_name)

        self._complete(build, self._raw(body, close if closed else ""), events)

    def _report(self, events: list[Event], reason: str) -> None:
        def build() -> ParsedToolCall:
            raise CallProblem(reason)

        self._complete(build, self._raw("".join(self._body), ""), events)

    def finish(self, tail: str, events: list[Event]) -> str:
        # `tail` can only be the start of a marker that never completed: a fragment, dropped.
        if self._state is _State.HEADER:
            header = "".join(self._header)
            if recipient(header) is not None:
                self._report(events, "the output ended inside its header (cut off)")
            return ""  # a header with no body: nothing to show
        body = "".join(self._body)
        if self._state is _State.JSON and self._scanner.in_string:
            close = body.find(CALL)
            if close >= 0:
                # An unterminated string swallowed <|call|>: cut there, read the rest as output.
                self._finish_call(events, closed=True, close=CALL, body=body[:close])
                return body[close + len(CALL) :]
        if self._state is _State.JSON:
            self._report(events, "the output ended before its JSON was complete (cut off)")
        else:
            # The end token is often a stop token the server does not send: the output's end ends it.
            self._finish_call(events, closed=False)
        return ""


class HarmonyFormat(CallFormat):
    name = "harmony"
    opening_markers = (CHANNEL, START)
    leading_markers = IN_HEADER
    stray_markers = (CALL, MESSAGE, CONSTRAIN)
    end_of_turn_markers = (RETURN, "<|endoftext|>")
    reasoning_markers = ((ANALYSIS, END),)
    call_noun = "<|channel|>commentary message"
    call_instructions = (
        "<|channel|>commentary to=functions.NAME <|constrain|>json<|message|> followed by one JSON object "
        "matching the tool's parameters, then <|call|> (NAME is the tool's name)"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        body = json.dumps(dict(arguments), ensure_ascii=False)
        return f"{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{body}{CALL}"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return _HarmonyReader(marker)
