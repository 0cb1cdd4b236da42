"""What the qwen3_xml and glm tests share: a case, how it is checked, and streaming it in chunks."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from toolbridge.parsing import (
    Event,
    ParseResult,
    ReasoningDelta,
    StreamParser,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    parse,
)

SCHEMAS: dict[str, Mapping[str, Any]] = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    },
    "write": {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "code": {"type": "string"},
            "data": {"type": "object"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "ratio": {"type": "number"},
            "force": {"type": "boolean"},
            "limit": {"type": ["integer", "null"]},
            "note": {"type": ["string", "null"]},
            "mode": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
    },
}

MARKERS = (
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<|im_end|>",
    "<|observation|>",
    "<|user|>",
    "<|endoftext|>",
)
"""What is a marker outside a call, and so never shown (`<function=` in prose is just text)."""


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    errors: int = 0
    reasoning: str = ""
    reasoning_open: bool = False
    truncated: bool = False
    formats: list[str] | None = None
    """The `format` of each call when it is not the family's own (a hermes body, say)."""


def check(result: ParseResult, case: Case, family: str) -> None:
    assert result.content == case.content
    assert result.reasoning == case.reasoning
    assert [(c.name, c.arguments) for c in result.tool_calls] == case.calls
    assert [c.format for c in result.tool_calls] == (case.formats or [family] * len(case.calls))
    assert all(c.id is None for c in result.tool_calls)
    assert len(result.errors) == case.errors, result.errors


def stream(
    text: str,
    cuts: Sequence[int],
    fmt: str,
    *,
    reasoning_open: bool = False,
    truncated: bool = False,
    schemas: Mapping[str, Mapping[str, Any]] | None = SCHEMAS,
) -> list[Event]:
    parser = StreamParser(fmt, reasoning_open=reasoning_open, schemas=schemas)
    bounds = [0, *sorted(set(cuts)), len(text)]
    events: list[Event] = []
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(text[start:end])
    return events + parser.finish(truncated=truncated)


def parse_case(case: Case, fmt: str) -> ParseResult:
    return parse(
        case.text, fmt, reasoning_open=case.reasoning_open, truncated=case.truncated, schemas=SCHEMAS
    )


def stream_case(case: Case, cuts: Sequence[int], fmt: str) -> list[Event]:
    return stream(case.text, cuts, fmt, reasoning_open=case.reasoning_open, truncated=case.truncated)


def assert_no_markup_shown(events: Sequence[Event]) -> None:
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta):
            assert not any(marker in event.text for marker in MARKERS), event


def arguments_per_call(events: Sequence[Event]) -> list[str]:
    """The argument deltas of each completed call, joined."""
    found: list[str] = []
    current: list[str] = []
    for event in events:
        if isinstance(event, ToolCallStart):
            current = []
        elif isinstance(event, ToolCallArgumentsDelta):
            current.append(event.text)
        elif isinstance(event, ToolCallEnd):
            found.append("".join(current))
    return found


def check_chunks(case: Case, cuts: Sequence[int], family: str) -> None:
    """Fed in the chunks `cuts` make: the same result and the same argument deltas as whole, and no
    markup shown."""
    events = stream_case(case, cuts, family)
    whole = stream_case(case, [], family)
    assert ParseResult.from_events(events) == ParseResult.from_events(whole) == parse_case(case, family)
    assert arguments_per_call(events) == arguments_per_call(whole)
    assert_no_markup_shown(events)


def check_one_character_at_a_time(case: Case, family: str) -> None:
    """Fed one character at a time: the case's result, as whole (`check_chunks`)."""
    cuts = range(len(case.text))
    check(ParseResult.from_events(stream_case(case, cuts, family)), case, family)
    check_chunks(case, cuts, family)


def assert_end_on_the_completing_feed(text: str, fmt: str) -> None:
    """`text` ends with a call's last character: in any chunk size, its ToolCallEnd comes with that feed."""
    for size in (1, 2, 3, 7, len(text)):
        parser = StreamParser(fmt, schemas=SCHEMAS)
        feeds = [parser.feed(text[start : start + size]) for start in range(0, len(text), size)]
        ends = [i for i, events in enumerate(feeds) for e in events if isinstance(e, ToolCallEnd)]
        assert ends[-1:] == [len(feeds) - 1], size
        assert len(ends) == text.count("</tool_call>"), size


# Round trips: any arguments, typed back by a schema that says what they were. Strings use an alphabet
# that cannot spell a tag, since a value holding its own closing tag and the next tag can't be told apart.
_key = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
_string = st.text(alphabet='ab \n<>/"\\{}[]é😀', max_size=12)
_value = st.one_of(
    _string,
    st.booleans(),
    st.none(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers() | _string, max_size=3),
    st.dictionaries(_string, st.integers() | _string, max_size=3),
)
round_trip_arguments = st.dictionaries(_key, _value)
_TYPES = {str: "string", bool: "boolean", type(None): "null", int: "integer", float: "number"}


def schema_for(arguments: dict[str, Any]) -> dict[str, Any]:
    properties = {
        name: {"type": _TYPES.get(type(v), "array" if isinstance(v, list) else "object")}
        for name, v in arguments.items()
    }
    return {"type": "object", "properties": properties}
