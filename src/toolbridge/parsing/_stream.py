"""The incremental parser: `feed(delta) -> events`, `finish() -> events`, and `parse()` on top of it.

Outside calls the parser is in one of two plain modes, content or reasoning. In a plain mode it looks
only for the first characters of the markers it knows (`<`, `[`, a backtick, ...): runs without them are
emitted in one piece, found by one compiled-regex search, so each character is looked at once. A
marker prefix at the end of a chunk (`<too`) is held back, and only while it could still become a
marker; nothing else is ever delayed but white space (below) and the output's first characters while
they could begin a format's `leading_markers` (gpt-oss starting inside a call's header). When an opening marker is complete, the
format's `CallReader` takes over until the call ends, then plain mode resumes where the reader stopped.

Reasoning: `<think>` (or a format's own marker, such as `[THINK]`) switches to reasoning and its close
back. A stream cannot look ahead, so whether it *starts* inside reasoning (the chat template opened it in
the prompt, and only the close will appear) must be said with `reasoning_open=True`. In content mode a
lone close marker is dropped, never shown. `parse()` sees the whole text, so it works this out itself
when not told.

White space the template puts around markers is not content: text never starts with white space, and
white space right before a marker (or at the end of the output) is dropped. So trailing white space of
a text run is held back until the next visible character shows it is part of the text.

Truncation: `finish(truncated=True)` says the output was cut off (finish reason `length`). A call still
open then is reported as a `ParseError`, never completed: a cut-off call must not run.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from toolbridge.parsing._events import Event, ParseError, ParseResult, ReasoningDelta, TextDelta
from toolbridge.parsing._format import NO_CONTEXT, CallFormat, CallReader, ReadContext
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

    def whole_marker(self, text: str) -> _Marker | None:
        """The longest marker `text` starts with. At the end of the output, text held back because it
        could still grow into a longer marker (`<|channel|>` of `<|channel|>analysis<|message|>`) is
        the shorter marker it already is."""
        for marker in self._by_first_char.get(text[0], ()):
            if text.startswith(marker.text):
                return marker
        return None


def _reasoning_pairs(formats: Sequence[CallFormat]) -> list[tuple[str, str]]:
    pairs = [(THINK_OPEN, THINK_CLOSE)]
    for fmt in formats:
        pairs += [pair for pair in fmt.reasoning_markers if pair not in pairs]
    return pairs


@cache
def _plain_modes(format_name: str) -> tuple[_PlainMode, _PlainMode]:
    formats = resolve_formats(format_name)
    pairs = _reasoning_pairs(formats)
    content_markers = [_Marker(open_, _Action.ENTER_REASONING) for open_, _ in pairs]
    content_markers += [_Marker(close, _Action.DROP) for _, close in pairs]
    for fmt in formats:
        opening = fmt.opening_markers if format_name == AUTO else fmt.opening_markers + fmt.named_markers
        content_markers += [_Marker(text, _Action.START_CALL, fmt) for text in opening]
        content_markers += [
            _Marker(text, _Action.DROP) for text in fmt.stray_markers + fmt.end_of_turn_markers
        ]
    reasoning_markers = [_Marker(close, _Action.LEAVE_REASONING) for _, close in pairs]
    reasoning_markers += [_Marker(open_, _Action.DROP) for open_, _ in pairs]
    reasoning_markers += [_Marker(text, _Action.DROP) for fmt in formats for text in fmt.end_of_turn_markers]
    return _PlainMode(_unique(content_markers), TextDelta), _PlainMode(
        _unique(reasoning_markers), ReasoningDelta
    )


@cache
def _leading_markers(format_name: str) -> tuple[_Marker, ...]:
    formats = resolve_formats(format_name)
    return tuple(_Marker(text, _Action.START_CALL, fmt) for fmt in formats for text in fmt.leading_markers)


def _unique(markers: list[_Marker]) -> list[_Marker]:
    """The first marker for each text: a format's stray close that is also a reasoning close, say."""
    seen: dict[str, _Marker] = {}
    for marker in markers:
        seen.setdefault(marker.text, marker)
    return list(seen.values())


class StreamParser:
    """Finds content, reasoning and tool calls in a model's output as it streams. Pure: no I/O.

    Feed every delta, then call `finish()` once at the end of the output. One parser reads one output.
    """

    def __init__(
        self,
        format: str = AUTO,
        *,
        reasoning_open: bool = False,
        schemas: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """`reasoning_open`: the prompt opened a reasoning block, so the output starts inside it.
        `schemas`: each offered tool's input schema by name, to type bare-text argument values."""
        self._content_mode, self._reasoning_mode = _plain_modes(format)
        self._mode = self._reasoning_mode if reasoning_open else self._content_mode
        self._context = ReadContext(schemas) if schemas else NO_CONTEXT
        self._leading = _leading_markers(format)
        """Markers that open a call at the start of the output: looked for until the start is read."""
        self._reader: CallReader | None = None
        self._call_raw: list[str] = []
        """The text of the call being read, to report it if the output is cut off inside it."""
        self._pending = ""
        self._held_space = ""
        self._space_before_call = ""
        """Dropped when the call is one; shown again if its reader rejects it as not a call."""
        # Per kind of text (content, reasoning).
        self._started: dict[type[Event], bool] = {TextDelta: False, ReasoningDelta: False}
        """Whether content and reasoning have shown anything yet: until then, leading white space is dropped."""
        self._event_caches: dict[type[Event], dict[str, Event]] = {TextDelta: {}, ReasoningDelta: {}}
        # The fast path: a one-character delta that cannot start a marker becomes one event directly.
        # `_fast_cache` is None while it does not apply (inside a call, with text or space held back,
        # or before a mode has shown anything).
        self._fast_cache: dict[str, Event] | None = None
        self._cache_after_space: dict[str, Event] | None = None
        """Set while only white space is held on the fast path: the cache to go back to."""

    def feed(self, delta: str) -> list[Event]:
        cache = self._fast_cache
        if cache is not None:
            event = cache.get(delta)
            if event is not None:
                return [event]
            if len(delta) == 1 and delta not in self._mode.triggers:
                if delta.isspace():  # held until the next character shows it is not before a marker
                    self._held_space = delta
                    self._fast_cache = None
                    self._cache_after_space = cache
                    return []
                event = self._mode.delta_type(delta)
                if len(cache) < _EVENT_CACHE_LIMIT:
                    cache[delta] = event
                return [event]
        elif self._cache_after_space is not None and len(delta) == 1 and delta not in self._mode.triggers:
            # The same fast path with white space held: a word after a space.
            if delta.isspace():
                self._held_space += delta
                return []
            text, self._held_space = self._held_space + delta, ""
            self._fast_cache, self._cache_after_space = self._cache_after_space, None
            return [self._mode.delta_type(text)]
        reader = self._reader
        if reader is not None and len(delta) == 1 and not self._pending:
            events = reader.read_char(delta)
            if events is not None:
                self._call_raw.append(delta)
                return events
        if not delta:
            return []
        return self._feed(delta)

    def finish(self, *, truncated: bool = False) -> list[Event]:
        """The output has ended; `truncated` if it was cut off (finish reason `length`)."""
        events: list[Event] = []
        while True:
            pending, self._pending = self._pending, ""
            reader, self._reader = self._reader, None
            if reader is not None and truncated and not reader.between_calls:
                raw = "".join(self._call_raw) + pending
                message = (
                    "The output was cut off (the model reached its token limit) in the middle of this "
                    "tool call, so it did not run. Write the call again, shorter if it was long."
                )
                events.append(ParseError(message, raw, cut_off=True))
            elif reader is not None:
                leftover = reader.finish(pending, events)
                if reader.rejected_text is not None:
                    self._emit_rejected(reader.rejected_text, events)
                if leftover:
                    events += self._feed(leftover)
                    continue
            elif pending and (marker := self._mode.whole_marker(pending)) is not None:
                if marker.action is _Action.START_CALL:
                    self._space_before_call = self._held_space
                self._held_space = ""
                self._enter(marker)
                events += self._feed(pending[len(marker.text) :])
                continue
            elif pending:
                self._emit(pending, events)
            break
        self._held_space = ""  # white space at the end of the output
        self._fast_cache = self._cache_after_space = None
        return events

    def _feed(self, delta: str) -> list[Event]:
        self._cache_after_space = None
        text = self._pending + delta if self._pending else delta
        self._pending = ""
        events: list[Event] = []
        pos = 0
        if self._leading:
            start = self._read_start(text)
            if start is None:
                self._pending = text
                return events
            pos = start
        n = len(text)
        while pos < n:
            reader = self._reader
            if reader is None:
                pos = self._read_plain(text, pos, events)
                continue
            new_pos = reader.read(text, pos, events)
            if reader.rejected_text is not None:
                self._reader = None
                self._emit_rejected(reader.rejected_text, events)
            elif reader.finished:
                self._reader = None
            else:
                self._call_raw.append(text[pos:new_pos])
                if new_pos < n:
                    self._pending = text[new_pos:]  # might be the start of the call's closing marker
                    new_pos = n
            pos = new_pos
        mode = self._mode
        kind = mode.delta_type
        plain = self._reader is None and not self._pending and not self._held_space and self._started[kind]
        self._fast_cache = self._event_caches[kind] if plain else None
        return events

    def _read_start(self, text: str) -> int | None:
        """The output's start: where reading goes on (after a leading marker, whose call is then open),
        or None while the text could still become one."""
        index = len(text) - len(text.lstrip())
        for marker in self._leading:
            if text.startswith(marker.text, index):
                self._leading = ()
                self._mode = self._content_mode  # a call's header: not inside reasoning
                self._enter(marker)
                return index + len(marker.text)
            if marker.text.startswith(text[index:]):
                return None
        self._leading = ()
        return 0

    def _emit_rejected(self, text: str, events: list[Event]) -> None:
        """Text a reader found was not a call after all: with the white space before it."""
        self._held_space = self._space_before_call
        self._emit(text, events)

    def _emit(self, text: str, events: list[Event]) -> None:
        """Show plain text in the current mode, holding back its trailing white space."""
        mode = self._mode
        if not self._started[mode.delta_type]:
            text = text.lstrip()
            if not text:
                return
        if self._held_space:
            text = self._held_space + text
        visible = text.rstrip()
        self._held_space = text[len(visible) :]
        if visible:
            self._started[mode.delta_type] = True
            events.append(mode.delta_type(visible))

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
                self._emit(text[start:index], events)
            if marker is True:
                self._pending = text[index:]
                return n
            assert isinstance(marker, _Marker)
            if marker.action is _Action.START_CALL:
                self._space_before_call = self._held_space
            self._held_space = ""  # the template's white space before a marker
            self._enter(marker)
            return index + len(marker.text)
        if start < n:
            self._emit(text[start:], events)
        return n

    def _enter(self, marker: _Marker) -> None:
        action = marker.action
        if action is _Action.ENTER_REASONING:
            self._mode = self._reasoning_mode
        elif action is _Action.LEAVE_REASONING:
            self._mode = self._content_mode
        elif action is _Action.START_CALL:
            assert marker.format is not None
            self._reader = marker.format.start_call(marker.text, self._context)
            self._call_raw = [marker.text]


def parse(
    text: str,
    format: str = AUTO,
    *,
    reasoning_open: bool | None = None,
    truncated: bool = False,
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> ParseResult:
    """Parse a whole model output. The same as streaming it through `StreamParser`, in one chunk.

    With `reasoning_open=None` a reasoning close marker with no open marker (or call) before it means
    the output began inside reasoning opened by the prompt, and the text before it is reasoning.
    """
    if reasoning_open is None:
        reasoning_open = _opens_inside_reasoning(text, resolve_formats(format))
    parser = StreamParser(format, reasoning_open=reasoning_open, schemas=schemas)
    return ParseResult.from_events([*parser.feed(text), *parser.finish(truncated=truncated)])


def _opens_inside_reasoning(text: str, formats: Sequence[CallFormat]) -> bool:
    pairs = _reasoning_pairs(formats)
    closes = [index for _, close in pairs if (index := text.find(close)) >= 0]
    if not closes:
        return False
    first_close = min(closes)
    earlier = [open_ for open_, _ in pairs] + [marker for fmt in formats for marker in fmt.opening_markers]
    return all(text.find(marker, 0, first_close) < 0 for marker in earlier)
