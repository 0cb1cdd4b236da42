"""The incremental parser: `feed(delta) -> events`, `finish() -> events`, and `parse()` on top of it.

Outside calls the parser is in one of two plain modes, content or reasoning. In a plain mode it looks
only for the first characters of the markers it knows (`<`, `[`, a backtick, ...): runs without them are
emitted in one piece, found by one compiled-regex search, so each character is looked at once. A
marker prefix at the end of a chunk (`<too`) is held back, and only while it could still become a
marker; nothing else is ever delayed but the output's first characters while they could begin a format's
`leading_markers` (gpt-oss starting inside a call's header) and, with the reasoning hint, undecided
text (below). When an opening marker is complete, the format's `CallReader` takes over until the call
ends, then plain mode resumes where the reader stopped.

Reasoning: `<think>` (or a format's own marker, such as `[THINK]`) switches to reasoning and its close
back. A call opening marker inside reasoning ends the reasoning and the call is read, as if the close
had been written: models leave the close out before a call (Ollama's Qwen3 parser and vLLM's Kimi K2
reasoning parser read such calls too), and a call must never vanish into reasoning.

Whether the output *starts* inside reasoning (the chat template opened it in the prompt) is decided by
the output; `reasoning_open=True` is only the hint that it may. With the hint the parser starts
*undecided*: it holds the text back (emits nothing) until the output shows what it was. A reasoning
close: the held text was reasoning. A call opening marker: it was content, and the call is read. An
explicit opener (`<think>`): reasoning, as the model repeated the opener. The end of the output: it was
the answer, content. A format's headers decide like call markers (harmony's `<|start|>`, `<|channel|>`
final or commentary). Past `HOLD_LIMIT` characters the hint is taken: the held text is emitted as
reasoning and reasoning streams from there (a call marker still ends it). Without the hint content
streams at once. In content mode a lone close marker is dropped, never shown; `parse()` sees the whole
text, so when not told it takes a close with no opener (or call) before it as the sign that the output
began inside reasoning, and it never needs the hold limit.

Text is kept exactly: content is what the model wrote outside calls, reasoning and their markers, and
reasoning what it wrote inside the reasoning markers, white space included (a surface that wants it
trimmed for display trims it there).

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

__all__ = ["HOLD_LIMIT", "StreamParser", "parse"]

# One-character deltas of plain text (models stream a token at a time) reuse their event objects within
# one parser: events are frozen, and building a new one per character was most of the cost of the fast
# path. One cache per plain mode, holding only characters that can't start a marker of that mode, so a
# hit needs no further check. Per parser, so nothing is shared between streams or threads.
_EVENT_CACHE_LIMIT = 4096

HOLD_LIMIT = 2000
"""Characters held back, with `reasoning_open=True`, before the hint is taken and they stream as reasoning."""

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
    reasoning_markers += [_Marker(open_, _Action.ENTER_REASONING) for open_, _ in pairs]  # repeated: dropped
    for fmt in formats:  # a call ends reasoning that was never closed; no call markup is reasoning
        opening = fmt.opening_markers if format_name == AUTO else fmt.opening_markers + fmt.named_markers
        reasoning_markers += [_Marker(text, _Action.START_CALL, fmt) for text in opening]
        reasoning_markers += [
            _Marker(text, _Action.DROP) for text in fmt.stray_markers + fmt.end_of_turn_markers
        ]
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
        """`reasoning_open`: the prompt may have opened a reasoning block, so the output may start inside
        it (a hint: the output decides, see the module's docstring).
        `schemas`: each offered tool's input schema by name, to type bare-text argument values."""
        self._content_mode, self._reasoning_mode = _plain_modes(format)
        self._mode = self._reasoning_mode if reasoning_open else self._content_mode
        self._undecided: list[str] | None = [] if reasoning_open else None
        """The text held back while it is not known whether the output started inside reasoning."""
        self._undecided_size = 0
        self._hold_limit: int | None = HOLD_LIMIT
        self._mode_before_call = self._mode
        """The mode to go back to when a reader finds its text was not a call after all."""
        self._context = ReadContext(schemas) if schemas else NO_CONTEXT
        self._leading = _leading_markers(format)
        """Markers that open a call at the start of the output: looked for until the start is read."""
        self._reader: CallReader | None = None
        self._call_raw: list[str] = []
        """The text of the call being read, to report it if the output is cut off inside it."""
        self._pending = ""
        self._event_caches: dict[type[Event], dict[str, Event]] = {TextDelta: {}, ReasoningDelta: {}}
        # The fast path: a one-character delta that cannot start a marker becomes one event directly.
        # `_fast_cache` is None while it does not apply (inside a call, with text held back).
        self._fast_cache: dict[str, Event] | None = None

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
                self._enter(marker, events)
                events += self._feed(pending[len(marker.text) :])
                continue
            elif pending:
                self._emit(pending, events)
            break
        if self._undecided is not None:
            self._decide(TextDelta, events)  # no marker showed reasoning: the text was the answer
        self._fast_cache = None
        return events

    def _feed(self, delta: str) -> list[Event]:
        text = self._pending + delta if self._pending else delta
        self._pending = ""
        events: list[Event] = []
        pos = 0
        if self._leading:
            start = self._read_start(text, events)
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
        plain = self._reader is None and not self._pending and self._undecided is None
        self._fast_cache = self._event_caches[self._mode.delta_type] if plain else None
        return events

    def _read_start(self, text: str, events: list[Event]) -> int | None:
        """The output's start: where reading goes on (after a leading marker, whose call is then open),
        or None while the text could still become one."""
        index = len(text) - len(text.lstrip())
        for marker in self._leading:
            if text.startswith(marker.text, index):
                self._leading = ()
                self._enter(marker, events)  # a call's header: not inside reasoning
                return index + len(marker.text)
            if marker.text.startswith(text[index:]):
                return None
        self._leading = ()
        return 0

    def _emit_rejected(self, text: str, events: list[Event]) -> None:
        """Text a reader found was not a call after all: shown where the marker was found."""
        self._mode = self._mode_before_call
        if text:
            self._emit(text, events)

    def _emit(self, text: str, events: list[Event]) -> None:
        """Show plain text in the current mode, or hold it while the mode is undecided."""
        undecided = self._undecided
        if undecided is None:
            events.append(self._mode.delta_type(text))
            return
        undecided.append(text)
        self._undecided_size += len(text)
        if self._hold_limit is not None and self._undecided_size > self._hold_limit:
            self._decide(ReasoningDelta, events)  # held long enough: the hint stands

    def _decide(self, kind: type[TextDelta] | type[ReasoningDelta], events: list[Event]) -> None:
        """The output has shown whether it started inside reasoning: the held text is `kind`."""
        assert self._undecided is not None
        held = "".join(self._undecided)
        self._undecided = None
        self._mode = self._content_mode if kind is TextDelta else self._reasoning_mode
        if held:
            events.append(kind(held))

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
            self._enter(marker, events)
            return index + len(marker.text)
        if start < n:
            self._emit(text[start:], events)
        return n

    def _enter(self, marker: _Marker, events: list[Event]) -> None:
        action = marker.action
        if self._undecided is not None and action is not _Action.DROP:
            # A call marker shows the held text was content; a reasoning marker, reasoning.
            self._decide(TextDelta if action is _Action.START_CALL else ReasoningDelta, events)
        if action is _Action.ENTER_REASONING:
            self._mode = self._reasoning_mode
        elif action is _Action.LEAVE_REASONING:
            self._mode = self._content_mode
        elif action is _Action.START_CALL:
            assert marker.format is not None
            self._mode_before_call = self._mode
            self._mode = self._content_mode  # a call ends reasoning the model did not close
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
    """Parse a whole model output. The same as streaming it through `StreamParser`, in one chunk, but
    with no hold limit: the whole text decides whether it started inside reasoning.

    With `reasoning_open=None` a reasoning close marker with no open marker (or call) before it means
    the output began inside reasoning opened by the prompt, and the text before it is reasoning.
    """
    if reasoning_open is None:
        reasoning_open = _opens_inside_reasoning(text, resolve_formats(format))
    parser = StreamParser(format, reasoning_open=reasoning_open, schemas=schemas)
    parser._hold_limit = None
    return ParseResult.from_events([*parser.feed(text), *parser.finish(truncated=truncated)])


def _opens_inside_reasoning(text: str, formats: Sequence[CallFormat]) -> bool:
    pairs = _reasoning_pairs(formats)
    closes = [index for _, close in pairs if (index := text.find(close)) >= 0]
    if not closes:
        return False
    first_close = min(closes)
    earlier = [open_ for open_, _ in pairs] + [marker for fmt in formats for marker in fmt.opening_markers]
    return all(text.find(marker, 0, first_close) < 0 for marker in earlier)
