"""`mistral`: `[TOOL_CALLS]` and then, depending on the tokenizer version, either

    [TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]       (v3/v7: a JSON list)
    [TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}            (v11: with a call id)
    [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{}  (v13+: one per call)

There is no closing marker: a call ends where its JSON balances, and `</s>` (end of turn) is dropped.
`NAME{json}` with `[ARGS]` missing is accepted directly after `[TOOL_CALLS]`. An `"id"` in a list item or
the `[CALL_ID]` is the model's own call id. A body that is not one of these shapes is a `ParseError`, and
reading goes on right after the part that was understood, so later text and calls are still found.
Reasoning: `[THINK]...[/THINK]` (Magistral-2509 and later v13+ reasoning models write it themselves;
with `reasoning_open=True` the output may start inside it); older Magistral's `<think>` is the parser's own.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge.parsing._calls import CallProblem, call_from_fields, call_from_object, decode_json
from toolbridge.parsing._events import (
    Event,
    ParseError,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolbridge.parsing._format import CallFormat, CallReader, MarkerMatch, ReadContext, match_marker
from toolbridge.parsing._json_scan import JsonScanner

__all__ = ["MistralFormat"]

OPEN = "[TOOL_CALLS]"
ARGS = "[ARGS]"
CALL_ID = "[CALL_ID]"
END_OF_TURN = "</s>"
_NON_WHITESPACE = re.compile(r"\S")
_NAME_END = re.compile(r"[\[{\s<]")  # a name runs to `[ARGS]`/`[CALL_ID]`, `{`, or something wrong
_ID_END = re.compile(r"[\[\s<]")


class _State(enum.Enum):
    START = enum.auto()
    """Just after `[TOOL_CALLS]`: a `[` opens the old JSON list, a name the new shape."""
    NAME = enum.auto()
    AFTER_NAME = enum.auto()
    CALL_ID = enum.auto()
    AFTER_CALL_ID = enum.auto()
    BEFORE_ARGUMENTS = enum.auto()
    ARGUMENTS = enum.auto()
    LIST = enum.auto()


class _MistralReader(CallReader):
    format_name = "mistral"

    def __init__(self, opening_marker: str) -> None:
        super().__init__(opening_marker)
        self._state = _State.START
        self._raw: list[str] = [opening_marker]
        self._name: list[str] = []
        self._call_id: list[str] = []
        self._body: list[str] = []
        self._scanner = JsonScanner(stop_chars="<")

    def read_char(self, char: str) -> list[Event] | None:
        if self._state is not _State.ARGUMENTS or not self._scanner.consume_plain_char(char):
            return None
        self._body.append(char)
        self._raw.append(char)
        return [ToolCallArgumentsDelta(char)]

    def read(self, text: str, pos: int, events: list[Event]) -> int:
        n = len(text)
        while pos < n and not self.finished:
            state = self._state
            if state is _State.ARGUMENTS or state is _State.LIST:
                new_pos = self._read_json(text, pos, events)
                if new_pos < n and not self.finished and self._state is state:
                    return new_pos  # held back: might be the start of </s>
                pos = new_pos
            elif state is _State.NAME or state is _State.CALL_ID:
                pos = self._read_word(text, pos, events)
                if pos < n and self._state is state and not self.finished:
                    return pos  # held back: might be the start of [ARGS] or [CALL_ID]
            else:
                match = _NON_WHITESPACE.search(text, pos)
                if match is None:
                    self._raw.append(text[pos:])
                    return n
                index = match.start()
                self._raw.append(text[pos:index])
                pos = self._after_whitespace(text, index, events)
                if pos == index and not self.finished and self._state is state:
                    return pos  # held back: a marker not complete yet
        return pos

    def _after_whitespace(self, text: str, index: int, events: list[Event]) -> int:
        """Decide at the first non-blank character of a state that skips blanks."""
        state = self._state
        char = text[index]
        if state is _State.START:
            if char == "[":
                outcome = match_marker(text, index, OPEN)
                if outcome is MarkerMatch.PARTIAL:
                    return index  # `[` opens the list, or another [TOOL_CALLS]: wait and see
                if outcome is MarkerMatch.FULL:
                    self._fail("nothing follows [TOOL_CALLS]", events)
                    return index
                self._state = _State.LIST
            elif char in "{<":
                self._fail("[TOOL_CALLS] is not followed by a tool name", events)
            else:
                self._state = _State.NAME
            return index
        if state is _State.BEFORE_ARGUMENTS:
            if char != "{":
                self._fail("the arguments after [ARGS] are not a JSON object", events)
                return index
            self._state = _State.ARGUMENTS
            self._announce("".join(self._name), events)
            return index
        # AFTER_NAME or AFTER_CALL_ID: expect [ARGS] (or [CALL_ID] after a name)
        for marker, target in ((ARGS, _State.BEFORE_ARGUMENTS), (CALL_ID, _State.CALL_ID)):
            if marker == CALL_ID and state is _State.AFTER_CALL_ID:
                continue
            outcome = match_marker(text, index, marker)
            if outcome is MarkerMatch.PARTIAL:
                return index
            if outcome is MarkerMatch.FULL:
                self._raw.append(marker)
                self._state = target
                return index + len(marker)
        self._fail(f"the tool name is not followed by {ARGS}", events)
        return index

    def _read_word(self, text: str, pos: int, events: list[Event]) -> int:
        """The tool name or the call id, up to the marker after it."""
        state = self._state
        target = self._name if state is _State.NAME else self._call_id
        match = (_NAME_END if state is _State.NAME else _ID_END).search(text, pos)
        end = len(text) if match is None else match.start()
        target.append(text[pos:end])
        self._raw.append(text[pos:end])
        if match is None:
            return end
        if not "".join(target):
            what = "tool name" if state is _State.NAME else "call id"
            self._fail(f"the {what} is missing", events)
            return end
        if state is _State.NAME and text[end] == "{":
            self._state = _State.ARGUMENTS  # `NAME{json}`: [ARGS] left out
            self._announce("".join(self._name), events)
            return end
        self._state = _State.AFTER_NAME if state is _State.NAME else _State.AFTER_CALL_ID
        return end

    def _read_json(self, text: str, pos: int, events: list[Event]) -> int:
        scanner = self._scanner
        while True:
            end = scanner.scan(text, pos)
            piece = text[pos:end]
            self._body.append(piece)
            self._raw.append(piece)
            if piece and self._state is _State.ARGUMENTS:
                events.append(ToolCallArgumentsDelta(piece))
            if scanner.done:
                self._end_json(events)
                return end
            if not scanner.stopped:
                return end
            outcome = match_marker(text, end, END_OF_TURN)
            if outcome is MarkerMatch.PARTIAL:
                return end
            if outcome is MarkerMatch.FULL:
                # The turn ended inside the JSON: a cut-off call, never repaired into one that runs.
                self._fail("the output ended before its JSON was complete", events)
                return end
            scanner.step_over_stop()  # a '<' outside strings: broken JSON, read on
            self._body.append("<")
            self._raw.append("<")
            if self._state is _State.ARGUMENTS:
                events.append(ToolCallArgumentsDelta("<"))
            pos = end + 1

    def _end_json(self, events: list[Event]) -> None:
        body = "".join(self._body)
        if self._state is _State.ARGUMENTS:
            call_id = "".join(self._call_id) or None
            name = "".join(self._name)
            self._complete(
                lambda: call_from_fields(name, body, call_id, None, self.format_name),
                "".join(self._raw),
                events,
            )
            return
        self.finished = True
        try:
            value = decode_json(body)
        except CallProblem as problem:
            self._error(str(problem), events)
            return
        items = value if isinstance(value, list) else [value]
        if not items:
            self._error("its list of calls is empty", events)
        for item in items:
            try:
                call = call_from_object(item, self.format_name)
            except CallProblem as problem:
                raw = json.dumps(item, ensure_ascii=False) if len(items) > 1 else "".join(self._raw)
                events.append(ParseError(f"Could not read the mistral tool call: {problem}.", raw))
                continue
            events.append(ToolCallStart(call.name))
            events.append(ToolCallArgumentsDelta(json.dumps(call.arguments, ensure_ascii=False)))
            events.append(ToolCallEnd(call))

    def _error(self, problem: str, events: list[Event]) -> None:
        events.append(ParseError(f"Could not read the mistral tool call: {problem}.", "".join(self._raw)))

    def _fail(self, problem: str, events: list[Event]) -> None:
        """End the call as unreadable; reading resumes where it stopped, as ordinary output."""
        self.finished = True
        self._error(
            f"{problem}; write {OPEN}NAME{ARGS}{{...arguments...}}",
            events,
        )

    def finish(self, tail: str, events: list[Event]) -> str:
        if self._state in (_State.ARGUMENTS, _State.LIST):
            body = "".join(self._body)
            cuts = [i for i in (body.find(OPEN), body.find(END_OF_TURN)) if i >= 0]
            if cuts:
                # An unterminated string swallowed what followed: report up to there, read the rest again.
                cut = min(cuts)
                raw = "".join(self._raw)  # ends with the body
                self._raw = [raw[: len(raw) - len(body) + cut]]
                self._fail("its JSON is not complete", events)
                return body[cut:] + tail
        self._raw.append(tail)
        self._fail("the output ended inside the call", events)
        return ""


class MistralFormat(CallFormat):
    name = "mistral"
    opening_markers = (OPEN,)
    end_of_turn_markers = (END_OF_TURN,)
    reasoning_markers = (("[THINK]", "[/THINK]"),)
    call_noun = "[TOOL_CALLS] call"
    call_instructions = (
        f"{OPEN} directly followed by the tool's name, then {ARGS}, then one JSON object with its "
        "arguments (matching the tool's parameters), with no spaces in between"
    )

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return f"{OPEN}{name}{ARGS}{json.dumps(arguments, ensure_ascii=False)}"

    def start_call(self, marker: str, context: ReadContext) -> CallReader:
        return _MistralReader(marker)
