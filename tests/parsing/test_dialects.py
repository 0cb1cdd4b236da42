"""Each dialect writes calls that it reads back, and arguments go through one JSON-repair rule."""

from __future__ import annotations

import re
from typing import Any

import pytest
from family_checks import stream

from toolbridge.errors import UsageError
from toolbridge.parsing import (
    CallProblem,
    ParseResult,
    available_formats,
    call_format,
    decode_arguments,
    parse,
    reading_format,
)
from toolbridge.parsing._stream import HOLD_LIMIT

ARGUMENTS: list[dict[str, Any]] = [
    {},
    {"expression": "15 + 27"},
    {"path": "/tmp/a b.xlsx", "rows": [["fruit", "kg"], ["苹果", 12]], "note": "braces } { and ``` too"},
    {"text": '</tool_call> and "quotes"\nand a newline'},
]
DIALECTS = [name for name in available_formats() if name != "auto"]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("arguments", ARGUMENTS)
def test_a_written_call_reads_back_as_the_same_call(dialect: str, arguments: dict[str, Any]) -> None:
    written = call_format(dialect).format_call("read_range", arguments)
    result = parse(f"Let me look.\n{written}\n", dialect)
    assert [(call.name, call.arguments) for call in result.tool_calls] == [("read_range", arguments)]
    assert result.errors == ()
    assert result.content.strip() == "Let me look."


def test_an_unknown_dialect_names_the_known_ones() -> None:
    with pytest.raises(UsageError, match="hermes"):
        call_format("xml")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ('{"a": 1}', {"a": 1}),
        ('{"a": 1,}', {"a": 1}),  # a trailing comma
        ('{"a": "line\nbreak"}', {"a": "line\nbreak"}),  # a raw newline in a string
        ("{'a': 1}", {"a": 1}),  # single quotes
        ("{'a': True, 'b': None}", {"a": True, "b": None}),  # Python literals
        ('{a: 1 "b": 2}', {"a": 1, "b": 2}),  # an unquoted key, a missing comma
        ('{"a": "}", "b": [\'{\']}', {"a": "}", "b": ["{"]}),  # brackets in strings of either quote
        ('{"a": 1}}', {"a": 1}),  # a brace too many
    ],
)
def test_arguments_are_decoded_and_repaired(text: str, expected: dict[str, Any]) -> None:
    assert decode_arguments(text) == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a": {"b": 2}', "ends before its closing '}'"),
        ('{"a": [1, {"b": 2', "ends before its closing '}]}'"),
        ('{"a": "cut sho', "ends inside a string"),
        ("{'a': 'cut sho", "ends inside a string"),
        ('{"a": [1, 2}', "has a '}' where a ']' belongs"),
        ('{"a": {"b": 1]}', "has a ']' where a '}' belongs"),
    ],
)
def test_arguments_cut_short_are_refused_never_completed(text: str, problem: str) -> None:
    with pytest.raises(CallProblem, match=re.escape(problem)):
        decode_arguments(text)


@pytest.mark.parametrize("text", ["expression is 2 + 2", "[1, 2]", '"just a string"', "{garbage"])
def test_arguments_that_are_not_an_object_are_a_problem_for_the_model(text: str) -> None:
    with pytest.raises(CallProblem):
        decode_arguments(text)


def _texts_around_calls(dialect: str) -> list[tuple[str, str]]:
    """(a marker, text with it outside any call) for each end-of-turn and reasoning marker of `dialect`."""
    fmt = call_format(dialect)
    call = fmt.format_call("f", {"a": "x"})
    texts = [
        (marker, f"Before {marker} after. {call} {marker}")
        for marker in fmt.stray_markers + fmt.end_of_turn_markers
    ]
    texts += [
        (marker, f"Before <think>hm{marker}m</think> after. {call}") for marker in fmt.end_of_turn_markers
    ]
    for open_, close in fmt.reasoning_markers:
        text = f"Before {open_}thinking{close} after. {call} {close}"
        texts += [(open_, text), (close, text)]
    return texts


@pytest.mark.parametrize(
    ("dialect", "marker", "text"),
    [(dialect, marker, text) for dialect in DIALECTS for marker, text in _texts_around_calls(dialect)],
)
@pytest.mark.parametrize("read_as", ["own", "auto"])
def test_no_end_or_reasoning_marker_of_a_dialect_is_ever_shown(
    dialect: str, marker: str, text: str, read_as: str
) -> None:
    # `reading_format`: `auto`, except for dialects whose bare calls auto does not look for (llama).
    result = parse(text, dialect if read_as == "own" else reading_format(dialect), reasoning_open=False)
    shown = result.content + result.reasoning
    assert marker not in shown
    assert "Before" in result.content
    assert "after." in result.content
    assert [(call.name, call.arguments) for call in result.tool_calls] == [("f", {"a": "x"})]


def _reasoning_markers(dialect: str) -> list[tuple[str, str]]:
    return [("<think>", "</think>"), *call_format(dialect).reasoning_markers]


def _calls_inside_reasoning(dialect: str) -> list[tuple[str, str, bool]]:
    """(id, text, reasoning_open) with the dialect's call inside reasoning the prompt may have opened,
    or the model opened and did not close."""
    call = call_format(dialect).format_call("get_weather", {"city": "Paris"})
    texts = [("presumed-open", f"The user wants the weather. {call}", True)]
    for open_, close in _reasoning_markers(dialect):
        texts += [
            (f"presumed-open-closed-by-{close}", f"The user wants the weather.{close}{call}", True),
            (f"opened-by-{open_}", f"{open_}The user wants the weather. {call}", False),
            (f"opened-by-{open_}-presumed-open", f"{open_}The user wants the weather. {call}", True),
        ]
    return texts


@pytest.mark.parametrize(
    ("dialect", "text", "reasoning_open"),
    [(dialect, text, opened) for dialect in DIALECTS for _, text, opened in _calls_inside_reasoning(dialect)],
    ids=[f"{dialect}-{id_}" for dialect in DIALECTS for id_, _, _ in _calls_inside_reasoning(dialect)],
)
@pytest.mark.parametrize("read_as", ["own", "auto"])
def test_a_call_inside_reasoning_is_never_lost(
    dialect: str, text: str, reasoning_open: bool, read_as: str
) -> None:
    fmt = dialect if read_as == "own" else reading_format(dialect)
    whole = parse(text, fmt, reasoning_open=reasoning_open)
    assert [(call.name, call.arguments) for call in whole.tool_calls] == [("get_weather", {"city": "Paris"})]
    assert whole.errors == ()
    assert "The user wants the weather." in whole.content + whole.reasoning
    assert "Paris" not in whole.content + whole.reasoning  # no markup of the call shown anywhere
    for cuts in ([], range(len(text))):
        assert ParseResult.from_events(stream(text, cuts, fmt, reasoning_open=reasoning_open)) == whole


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_call_after_the_hold_limit_still_ends_reasoning(dialect: str) -> None:
    call = call_format(dialect).format_call("get_weather", {"city": "Paris"})
    thinking = "Let me think about the weather. " * (HOLD_LIMIT // 16)
    events = stream(thinking + call, range(0, len(thinking) + len(call), 7), dialect, reasoning_open=True)
    result = ParseResult.from_events(events)
    assert result.reasoning == thinking  # the hint stood once the text outgrew the limit
    assert [(c.name, c.arguments) for c in result.tool_calls] == [("get_weather", {"city": "Paris"})]
