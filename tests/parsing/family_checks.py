"""What every dialect's table of constructed outputs is checked for: the expected content, reasoning,
calls and errors, the same result whole, one character at a time and in random chunks, and no marker of
the family in content or reasoning."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from toolbridge.parsing import Event, ParseResult, ReasoningDelta, StreamParser, TextDelta, parse


@dataclass(frozen=True)
class Case:
    """One model output and what toolbridge must see in it (the dialect tables, the shared corpus in
    parsing_cases.py and the conformance table all use it)."""

    id: str
    text: str
    content: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    errors: int = 0
    reasoning: str = ""
    reasoning_open: bool | None = None
    """Whether the prompt opened a reasoning block. `None`: not told (`parse()` decides from the text; a
    stream, and the checks here, start in content)."""
    truncated: bool = False
    """The output was cut off (finish reason `length`)."""
    format: str = "auto"
    """The parser format the shared corpus reads the output in."""
    ids: list[str | None] | None = None
    """The calls' ids, when checked."""
    sources: list[str | None] | None = None
    """The calls' sources, when checked."""


def stream(
    text: str,
    cuts: Sequence[int],
    fmt: str,
    *,
    reasoning_open: bool = False,
    truncated: bool = False,
    schemas: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Event]:
    parser = StreamParser(fmt, reasoning_open=reasoning_open, schemas=schemas)
    bounds = [0, *sorted(set(cuts)), len(text)]
    events: list[Event] = []
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(text[start:end])
    return events + parser.finish(truncated=truncated)


def check_whole(case: Case, fmt: str, family: str, markers: Sequence[str]) -> None:
    result = parse(case.text, fmt, reasoning_open=bool(case.reasoning_open), truncated=case.truncated)
    assert result.content == case.content
    assert result.reasoning == case.reasoning
    assert [(call.name, call.arguments) for call in result.tool_calls] == case.calls
    assert all(call.format == family for call in result.tool_calls)
    assert len(result.errors) == case.errors, result.errors
    check_no_markers(stream(case.text, [], fmt, reasoning_open=bool(case.reasoning_open)), markers)


def check_chunks(case: Case, fmt: str, cuts: Sequence[int], markers: Sequence[str]) -> None:
    options: dict[str, Any] = {"reasoning_open": bool(case.reasoning_open), "truncated": case.truncated}
    events = stream(case.text, cuts, fmt, **options)
    whole = parse(case.text, fmt, **options)
    assert ParseResult.from_events(events) == whole
    check_no_markers(events, markers)


def check_no_markers(events: Sequence[Event], markers: Sequence[str]) -> None:
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta):
            assert not any(marker in event.text for marker in markers), event


def random_cuts(text: str) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, len(text)), max_size=max(1, len(text) // 3))


def fragment_text(pieces: Sequence[str]) -> st.SearchStrategy[str]:
    """Text made of a dialect's markers, their fragments and the characters its bodies are made of:
    mostly not calls, and full of near-misses."""
    return st.lists(st.sampled_from(pieces), max_size=30).map("".join)


def check_fragments(text: str, fmt: str, cuts: Sequence[int], markers: Sequence[str]) -> None:
    """Any chunking reads as the whole does, and no marker is ever content."""
    for truncated in (False, True):
        whole = parse(text, fmt, reasoning_open=False, truncated=truncated)
        assert ParseResult.from_events(stream(text, cuts, fmt, truncated=truncated)) == whole
        assert ParseResult.from_events(stream(text, range(len(text)), fmt, truncated=truncated)) == whole
        assert not any(marker in whole.content for marker in markers), whole
