"""The incremental parser: `feed(delta) -> events`, `finish() -> events`, and `parse()` on top of it.

Outside calls the parser is in one of two plain modes, content or reasoning. In a plain mode it looks
only for the first characters of the markers it knows (`<` and a backtick): runs without them are
emitted in one piece, found by one compiled-regex search, so each character is looked at once. A
marker prefix at the end of a chunk (`<too`) is held back, and only while it could still become a
marker; nothing else is ever delayed. When an opening marker is complete, the format's `CallReader`
takes over until the call ends, then plain mode resumes where the reader stopped.

Reasoning: `<think>` switches to reasoning and `</think>` back. A stream cannot look ahead, so whether
it *starts* inside a think block (the chat template put `<think>` in the prompt, and only `</think>`
will appear) must be said with `starts_in_reasoning=True`. In content mode a lone `</think>` is dropped,
never shown. `parse()` sees the whole text, so it works this out itself when not told.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from toolbridge.parsing._events import Event, ParseResult, ReasoningDelta, TextDelta
from toolbridge.parsing._format import CallFormat, CallReader
from toolbridge.parsing._registry import AUTO, resolve_formats

__all__ = ["StreamParser", "parse"]

# One-character deltas of plain text (models stream a token at a time) reuse their event objects within
# one parser: events are frozen, and building a new one per character was most of the cost of the fast
# path. One cache per plain mode, holding only characters that can't start a marker of that mode, so a
# hit needs no further check. Per parser, so nothing is shared between streams or threads.
_EVENT_CACHE_LIMIT = 4096

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


class _Action(enum.Enum):
    ENTER_REASONING = enum.auto()
    LEAVE_REASONING = enum.auto()
    DROP = enum.auto()
    START_CALL = enum.auto()


@dataclass(frozen=True, slots=True)
class _Marker:
    text: str
    action: _Action
    format: CallFormat | None = None


class _PlainMode:
    """What plain text is looked through for, and which event it becomes."""

    def __init__(
        self, markers: Sequence[_Marker], delta_type: type[TextDelta] | type[ReasoningDelta]
    ) -> None:
        self.delta_type = delta_type
        self.triggers = frozenset(marker.text[0] for marker in markers)
        self.search = re.compile("[" + re.escape("".join(sorted(self.triggers))) + "]").search
        # Most '<' and backticks in prose begin no marker; their next character usually shows it at once.
        self._first_two = frozenset(marker.text[:2] for marker in markers)
        self._check_first_two = all(len(marker.text) >= 2 for marker in markers)
        self._by_first_char: dict[str, list[_Marker]] = {}
        for marker in sorted(markers, key=lambda m: -len(m.text)):  # longest first
            self._by_first_char.setdefault(marker.text[0], []).append(marker)

    def match(self, text: str, index: int) -> _Marker | bool:
        """The marker at `text[index]`; True if the text ends with what could still become one."""
        rest = len(text) - index
        if rest > 1 and self._check_first_two and text[index : index + 2] not in self._first_two:
            return False
        for marker in self._by_first_char[text[index]]:
            if text.startswith(marker.text, index):
                return marker
            if rest < len(marker.text) and marker.text.startswith(text[index:]):
                return True
        return False


@cache
def _plain_modes(format_name: str) -> tuple[_PlainMode, _PlainMode]:
    formats = resolve_formats(format_name)
    content_markers = [_Marker(THINK_OPEN, _Action.ENTER_REASONING), _Marker(THINK_CLOSE, _Action.DROP)]
    for fmt in formats:
        content_markers += [_Marker(text, _Action.START_CALL, fmt) for text in fmt.opening_markers]
        content_markers += [_Marker(text, _Action.DROP) for text in fmt.stray_markers]
    reasoning_markers = [_Marker(THINK_CLOSE, _Action.LEAVE_REASONING), _Marker(THINK_OPEN, _Action.DROP)]
    return _PlainMode(content_markers, TextDelta), _PlainMode(reasoning_markers, ReasoningDelta)


class StreamParser:
    """Finds content, reasoning and tool calls in a model's output as it streams. Pure: no I/O.

    Feed every delta, then call `finish()` once at the end of the output. One parser reads one output.
    """

    def __init__(self, format: str = AUTO, *, starts_in_reasoning: bool = False) -> None:
        self._content_mode, self._reasoning_mode = _plain_modes(format)
        self._mode = self._reasoning_mode if starts_in_reasoning else self._content_mode
        self._reader: CallReader | None = None
        self._pending = ""
        self._event_caches: dict[_PlainMode, dict[str, Event]] = {
            self._content_mode: {},
            self._reasoning_mode: {},
        }
        # The fast path: a one-character delta that cannot start a marker becomes one event directly.
        # `_fast_cache` is None while it does not apply (inside a call, or with text held back).
        self._fast_cache: dict[str, Event] | None = self._event_caches[self._mode]

    def feed(self, delta: str) -> list[Event]:
        cache = self._fast_cache
        if cache is not None:
            event = cache.get(delta)
            if event is not None:
                return [event]
            if len(delta) == 1 and delta not in self._mode.triggers:
                event = self._mode.delta_type(delta)
                if len(cache) < _EVENT_CACHE_LIMIT:
                    cache[delta] = event
                return [event]
        reader = self._reader
        if reader is not None and len(delta) == 1 and not self._pending:
            events = reader.read_char(delta)
            if events is not None:
                return events
        if not delta:
            return []
        return self._feed(delta)

    def finish(self) -> list[Event]:
        events: list[Event] = []
        while True:
            pending, self._pending = self._pending, ""
            reader, self._reader = self._reader, None
            if reader is not None:
                leftover = reader.finish(pending, events)
                if reader.rejected_text is not None:
                    events.append(TextDelta(reader.rejected_text))
                if leftover:
                    events += self._feed(leftover)
                    continue
            elif pending:
                events.append(self._mode.delta_type(pending))
            break
        self._fast_cache = None
        return events

    def _feed(self, delta: str) -> list[Event]:
        text = self._pending + delta if self._pending else delta
        self._pending = ""
        events: list[Event] = []
        pos = 0
        n = len(text)
        while pos < n:
            reader = self._reader
            if reader is None:
                pos = self._read_plain(text, pos, events)
                continue
            new_pos = reader.read(text, pos, events)
            if reader.rejected_text is not None:
                events.append(TextDelta(reader.rejected_text))
                self._reader = None
            elif reader.finished:
                self._reader = None
            elif new_pos < n:
                self._pending = text[new_pos:]  # might be the start of the call's closing marker
                new_pos = n
            pos = new_pos
        self._fast_cache = (
            self._event_caches[self._mode] if self._reader is None and not self._pending else None
        )
        return events

    def _read_plain(self, text: str, pos: int, events: list[Event]) -> int:
        mode = self._mode
        search = mode.search
        start = pos
        n = len(text)
        while (found := search(text, pos)) is not None:
            index = found.start()
            marker = mode.match(text, index)
            if marker is False:
                pos = index + 1
                continue
            if start < index:
                events.append(mode.delta_type(text[start:index]))
            if marker is True:
                self._pending = text[index:]
                return n
            assert isinstance(marker, _Marker)
            self._enter(marker)
            return index + len(marker.text)
        if start < n:
            events.append(mode.delta_type(text[start:]))
        return n

    def _enter(self, marker: _Marker) -> None:
        action = marker.action
        if action is _Action.ENTER_REASONING:
            self._mode = self._reasoning_mode
        elif action is _Action.LEAVE_REASONING:
            self._mode = self._content_mode
        elif action is _Action.START_CALL:
            assert marker.format is not None
            self._reader = marker.format.start_call(marker.text)


def parse(text: str, format: str = AUTO, *, starts_in_reasoning: bool | None = None) -> ParseResult:
    """Parse a whole model output. The same as streaming it through `StreamParser`, in one chunk.

    With `starts_in_reasoning=None` a `</think>` with no `<think>` (or call) before it means the output
    began inside a think block opened by the prompt, and the text before it is reasoning.
    """
    if starts_in_reasoning is None:
        starts_in_reasoning = _opens_inside_reasoning(text, resolve_formats(format))
    parser = StreamParser(format, starts_in_reasoning=starts_in_reasoning)
    return ParseResult.from_events([*parser.feed(text), *parser.finish()])


def _opens_inside_reasoning(text: str, formats: Sequence[CallFormat]) -> bool:
    close = text.find(THINK_CLOSE)
    if close < 0:
        return False
    earlier = [THINK_OPEN, *(marker for fmt in formats for marker in fmt.opening_markers)]
    return all(text.find(marker, 0, close) < 0 for marker in earlier)
