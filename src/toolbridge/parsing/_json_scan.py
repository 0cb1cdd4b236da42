"""An incremental scanner that finds where a JSON object ends, one chunk at a time.

It does not build values: it only follows strings (with escapes) and bracket depth, so the end of a call
is found by structure, never by a regex over the accumulated text. Each character is looked at once:
runs inside strings and between structural characters are skipped by compiled regexes (C speed).

For a call object it also notes, on the way, the first top-level name value (so `ToolCallStart` can be
sent early) and where the arguments value starts and ends (so its text can be streamed as it arrives).
Single-quoted strings are not followed; json-repair deals with them once the object is complete.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

__all__ = ["JsonScanner"]

_STRING_SPECIAL = re.compile(r'["\\]')
_NON_WHITESPACE = re.compile(r"\S")


class JsonScanner:
    """Follows one JSON object or array through a stream of chunks.

    `scan(text, pos)` consumes from `pos` and returns where it stopped: the end of `text`, just past the
    value's last bracket (`done`), or at a stop character found outside strings (`stopped`, not consumed;
    the caller decides whether it begins a closing marker, or calls `step_over_stop()` and scans on).
    Offsets (`offset`, `arguments_start`, `arguments_end`) count characters consumed since the start.
    """

    def __init__(
        self,
        *,
        stop_chars: str = "",
        name_keys: Collection[str] = (),
        argument_keys: Collection[str] = (),
    ) -> None:
        self._outside = re.compile("[" + re.escape('"{}[],:' + stop_chars) + "]")
        # Below the top level only strings and brackets matter: commas and colons are skipped in C.
        self._outside_nested = re.compile("[" + re.escape('"{}[]' + stop_chars) + "]")
        self._not_plain = frozenset('"{}[],:\\' + stop_chars)
        self._name_keys = name_keys
        self._argument_keys = argument_keys
        self.depth = 0
        self.in_string = False
        self.done = False
        self.stopped = False
        self.offset = 0
        self._escaped = False
        # Top-level members of the object: the last key, and the value being read.
        self._expect_key = False
        self._key: str | None = None
        self._value_key: str | None = None
        self._value_open = False
        self._value_start_pending = False
        self._in_arguments = False
        self._capture: list[str] | None = None
        self._capture_from = 0
        self._capturing_key = False
        self.name: str | None = None
        self.arguments_start: int | None = None
        self.arguments_end: int | None = None

    @property
    def in_arguments(self) -> bool:
        return self.arguments_start is not None and self.arguments_end is None

    @property
    def only_the_object_left_open(self) -> bool:
        """The call object's own closing brace is all that is missing, after whole arguments: a model
        that left it out lost nothing, and closing it invents no argument."""
        return self.depth == 1 and not self.in_string and self.arguments_end is not None

    def consume_plain_char(self, char: str) -> bool:
        """Fast path for streams of single characters: take `char` if it changes no structure."""
        if char in self._not_plain or self._value_start_pending:
            return False
        self._escaped = False
        if self._capture is not None:
            self._capture.append(char)
        self.offset += 1
        return True

    def step_over_stop(self) -> None:
        """Treat the stop character the scan halted on as ordinary text."""
        self.offset += 1

    def scan(self, text: str, pos: int) -> int:
        n = len(text)
        base = self.offset - pos  # absolute offset of text[i] is base + i
        i = pos
        self.stopped = False
        if self._capture is not None:
            self._capture_from = pos
        if self._escaped and i < n:
            self._escaped = False
            i += 1
        if self._value_start_pending:
            self._find_value_start(text, i, base)
        search_top = self._outside.search
        search_nested = self._outside_nested.search
        search_string = _STRING_SPECIAL.search
        while i < n:
            if self.in_string:
                match = search_string(text, i)
                if match is None:
                    i = n
                    break
                j = match.start()
                if text[j] == "\\":
                    if j + 1 >= n:
                        self._escaped = True
                        i = n
                        break
                    i = j + 2
                    continue
                self.in_string = False
                i = j + 1
                if self.depth == 1:
                    self._top_level_string_ended(text, j, base)
                continue
            match = search_top(text, i) if self.depth <= 1 else search_nested(text, i)
            if match is None:
                i = n
                break
            j = match.start()
            char = text[j]
            i = j + 1
            if char == '"':
                self.in_string = True
                if self.depth == 1:
                    self._top_level_string_started(j)
            elif char == "{" or char == "[":
                self.depth += 1
                if self.depth == 1:
                    self._expect_key = char == "{"
            elif char == "}" or char == "]":
                if self.depth == 1 and self._value_open:
                    self._end_value(base + j)  # a number or literal ends at the bracket
                self.depth -= 1
                if self.depth == 1 and self._value_open:
                    self._end_value(base + j + 1)  # a nested object or array just closed
                if self.depth <= 0:
                    self.done = True
                    break
            elif char == ",":
                if self.depth == 1:
                    if self._value_open:
                        self._end_value(base + j)
                    self._expect_key = True
            elif char == ":":
                if self.depth == 1:
                    self._value_key = self._key
                    self._value_open = True
                    self._value_start_pending = True
                    self._find_value_start(text, i, base)
            else:
                self.stopped = True
                i = j
                break
        if self._capture is not None and i == n:
            self._capture.append(text[self._capture_from :])
        self.offset = base + i
        return i

    def _find_value_start(self, text: str, pos: int, base: int) -> None:
        match = _NON_WHITESPACE.search(text, pos)
        if match is None:
            return
        self._value_start_pending = False
        if self.arguments_start is None and self._value_key in self._argument_keys:
            self.arguments_start = base + match.start()
            self._in_arguments = True

    def _end_value(self, end: int) -> None:
        self._value_open = False
        if self._in_arguments:
            self._in_arguments = False
            self.arguments_end = end

    def _top_level_string_started(self, index: int) -> None:
        if self._expect_key:
            self._capturing_key = True
        elif self.name is None and self._value_open and self._value_key in self._name_keys:
            self._capturing_key = False
        else:
            return
        self._capture = []
        self._capture_from = index

    def _top_level_string_ended(self, text: str, index: int, base: int) -> None:
        if self._capture is not None:
            literal = "".join(self._capture) + text[self._capture_from : index + 1]
            self._capture = None
            try:
                value = json.loads(literal)
            except (ValueError, RecursionError):
                value = literal.strip('"')
            if self._capturing_key:
                self._key = str(value)
                self._expect_key = False
                return
            self.name = str(value)
        if self._value_open:
            self._end_value(base + index + 1)
