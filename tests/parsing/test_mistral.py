"""The `mistral` dialect: `[TOOL_CALLS]NAME[ARGS]{json}` (with an optional `[CALL_ID]`) and the older
`[TOOL_CALLS] [json list]`, read the same whole, one character at a time and in random chunks."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbridge.parsing import Event, ParseResult, StreamParser, ToolCallEnd, call_format, parse


def stream(text: str, cuts: Sequence[int], fmt: str) -> ParseResult:
    parser = StreamParser(fmt)
    bounds = [0, *sorted(set(cuts)), len(text)]
    events: list[Event] = []
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(text[start:end])
    return ParseResult.from_events(events + parser.finish())


def calls(result: ParseResult) -> list[tuple[str, dict[str, Any], str | None]]:
    return [(call.name, call.arguments, call.id) for call in result.tool_calls]


ARGS = json.dumps(
    {"q": {"deep": [1, {"x": None}]}, "s": 'é 中文 "quoted" \\ \n', "e": "😀"}, ensure_ascii=False
)

# id, text, content, calls (name, arguments, id), number of errors
CASES: list[tuple[str, str, str, list[tuple[str, dict[str, Any], str | None]], int]] = [
    (
        "single",
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
        "",
        [("get_weather", {"city": "Paris"}, None)],
        0,
    ),
    (
        "single-call-id",
        '[TOOL_CALLS]get_weather[CALL_ID]a1B2c3D4e[ARGS]{"city": "Paris"}</s>',
        "",
        [("get_weather", {"city": "Paris"}, "a1B2c3D4e")],
        0,
    ),
    (
        "parallel",
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{"tz": "CET"}</s>',
        "",
        [("get_weather", {"city": "Paris"}, None), ("get_time", {"tz": "CET"}, None)],
        0,
    ),
    (
        "old-list-space",
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}]</s>',
        "",
        [("get_weather", {"city": "Paris"}, None)],
        0,
    ),
    (
        "old-list-parallel-id",
        '[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}, "id": "abcdefghi"}, {"name": "b", "arguments": {}}]',
        "",
        [("a", {"x": 1}, "abcdefghi"), ("b", {}, None)],
        0,
    ),
    (
        "no-call",
        "Just [a link](x) and [brackets], a < b. </s>",
        "Just [a link](x) and [brackets], a < b. ",
        [],
        0,
    ),
    (
        "text-before-after",
        'Let me check.\n[TOOL_CALLS]get_time[ARGS]{"tz": "CET"} Done.',
        "Let me check.\n Done.",
        [("get_time", {"tz": "CET"}, None)],
        0,
    ),
    ("nested-unicode-escaped", f"[TOOL_CALLS]f[ARGS]{ARGS}", "", [("f", json.loads(ARGS), None)], 0),
    ("empty-arguments", "[TOOL_CALLS]now[ARGS]{}", "", [("now", {}, None)], 0),
    ("args-marker-missing", '[TOOL_CALLS]f{"a": 1} x', " x", [("f", {"a": 1}, None)], 0),
    (
        "marker-in-string",
        '[TOOL_CALLS]say[ARGS]{"text": "write [TOOL_CALLS]x[ARGS]{} or </s> or }"} after',
        " after",
        [("say", {"text": "write [TOOL_CALLS]x[ARGS]{} or </s> or }"}, None)],
        0,
    ),
    (
        "malformed-then-call",
        "[TOOL_CALLS]get_weather[ARGS]oops, then [TOOL_CALLS]g[ARGS]{}",
        "oops, then ",
        [("g", {}, None)],
        1,
    ),
    ("malformed-name", "[TOOL_CALLS]get weather[ARGS]{}", "weather[ARGS]{}", [], 1),
    (
        "unterminated-string",
        '[TOOL_CALLS]f[ARGS]{"a": "open}[TOOL_CALLS]g[ARGS]{"b": 1} end',
        " end",
        [("g", {"b": 1}, None)],
        1,
    ),
    ("truncated", '[TOOL_CALLS]f[ARGS]{"a": 1, "b": [', "", [], 1),
    ("truncated-at-end-of-turn", '[TOOL_CALLS]f[ARGS]{"a": 1</s>after', "after", [], 1),
    ("empty-marker", "text [TOOL_CALLS]", "text ", [], 1),
]


@pytest.mark.parametrize(
    ("text", "content", "expected", "errors"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("fmt", ["mistral", "auto"])
def test_whole_and_one_character_at_a_time(
    fmt: str, text: str, content: str, expected: list[tuple[str, dict[str, Any], str | None]], errors: int
) -> None:
    result = parse(text, fmt)
    assert (result.content, calls(result), len(result.errors)) == (content, expected, errors)
    assert all(call.format == "mistral" for call in result.tool_calls)
    assert stream(text, range(len(text)), fmt) == result


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("text", [c[1] for c in CASES], ids=[c[0] for c in CASES])
@given(data=st.data())
def test_random_chunks_give_the_same_result(text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    assert stream(text, cuts, "mistral") == parse(text, "mistral")


def test_call_ends_on_the_feed_that_balances_its_json() -> None:
    parser = StreamParser("mistral")
    assert not any(isinstance(e, ToolCallEnd) for e in parser.feed('[TOOL_CALLS]f[ARGS]{"a": {"b": 1}'))
    assert any(isinstance(e, ToolCallEnd) for e in parser.feed("}"))


@settings(max_examples=100, deadline=None)
@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,20}", fullmatch=True),
    arguments=st.dictionaries(
        st.text(max_size=8),
        st.recursive(
            st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12),
            lambda inner: (
                st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
            ),
            max_leaves=6,
        ),
        max_size=4,
    ),
)
def test_format_call_round_trips(name: str, arguments: dict[str, Any]) -> None:
    text = "Before " + call_format("mistral").format_call(name, arguments) + " after"
    result = parse(text, "mistral")
    assert (result.content, calls(result), result.errors) == ("Before  after", [(name, arguments, None)], ())
    assert stream(text, range(len(text)), "auto") == result


def test_writes_its_own_dialect() -> None:
    fmt = call_format("mistral")
    assert fmt.format_call("get_time", {"tz": "CET"}) == '[TOOL_CALLS]get_time[ARGS]{"tz": "CET"}'
    assert "[TOOL_CALLS]" in fmt.call_noun
    assert "[ARGS]" in fmt.call_instructions


# Magistral (v13+ reasoning models): [THINK]...[/THINK], written by the model or opened by the prompt.
THINK_CASES: list[tuple[str, str, bool, str, str, list[tuple[str, dict[str, Any], str | None]]]] = [
    (
        "think-then-call",
        '[THINK]Need the weather [of] Paris.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}</s>',
        False,
        "Need the weather [of] Paris.",
        "",
        [("get_weather", {"city": "Paris"}, None)],
    ),
    (
        "think-then-answer",
        "[THINK]\nEasy.\n[/THINK]\n\nIt is sunny.</s>",
        False,
        "\nEasy.\n",
        "\n\nIt is sunny.",
        [],
    ),
    (
        "prompt-opened-then-call",
        'Need the time.[/THINK]Checking.[TOOL_CALLS]get_time[ARGS]{"tz": "CET"}',
        True,
        "Need the time.",
        "Checking.",
        [("get_time", {"tz": "CET"}, None)],
    ),
    (
        "a-call-inside-reasoning-ends-it",
        "[THINK]Write [TOOL_CALLS]f[ARGS]{} later.[/THINK]Done.",
        False,
        "Write ",
        " later.Done.",
        [("f", {}, None)],
    ),
    ("stray-close-dropped", "Hi[/THINK] there", False, "", "Hi there", []),
]


def stream_open(text: str, cuts: Sequence[int], reasoning_open: bool) -> ParseResult:
    parser = StreamParser("mistral", reasoning_open=reasoning_open)
    bounds = [0, *sorted(set(cuts)), len(text)]
    events: list[Event] = []
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(text[start:end])
    return ParseResult.from_events(events + parser.finish())


@pytest.mark.parametrize(
    ("text", "opened", "reasoning", "content", "expected"),
    [c[1:] for c in THINK_CASES],
    ids=[c[0] for c in THINK_CASES],
)
@pytest.mark.parametrize("fmt", ["mistral", "auto"])
def test_think_reasoning_is_separated(
    fmt: str,
    text: str,
    opened: bool,
    reasoning: str,
    content: str,
    expected: list[tuple[str, dict[str, Any], str | None]],
) -> None:
    result = parse(text, fmt, reasoning_open=opened)
    assert (result.reasoning, result.content, calls(result), result.errors) == (
        reasoning,
        content,
        expected,
        (),
    )
    assert stream_open(text, range(len(text)), opened) == parse(text, "mistral", reasoning_open=opened)
    if opened:  # parse() works a prompt-opened block out itself from the lone [/THINK]
        assert parse(text, fmt) == result


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize(("text", "opened"), [c[1:3] for c in THINK_CASES], ids=[c[0] for c in THINK_CASES])
@given(data=st.data())
def test_think_random_chunks_give_the_same_result(text: str, opened: bool, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    assert stream_open(text, cuts, opened) == parse(text, "mistral", reasoning_open=opened)
