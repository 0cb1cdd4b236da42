"""`gemma`: Gemma 4's `<|tool_call>call:NAME{key:value}<tool_call|>` with its `<|"|>` string delimiter and
its thought channel (docs/dialects.md#gemma-gemma-4), read the same whole, one character at a time and in
random chunks."""

from __future__ import annotations

from typing import Any

import pytest
from family_checks import Case, check_chunks, check_fragments, check_whole, fragment_text, random_cuts, stream
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbridge.parsing import ParseResult, StreamParser, ToolCallEnd, ToolCallStart, call_format, parse

FAMILY = "gemma"
Q = '<|"|>'
MARKERS = ("<|tool_call>", "<tool_call|>", Q, "<turn|>", "<|channel>", "<channel|>")


def call(name: str, body: str) -> str:
    return f"<|tool_call>call:{name}{body}<tool_call|>"


WEATHER = call("get_weather", f"{{city:{Q}Paris{Q},days:3}}")

CASES = [
    Case("single", WEATHER + "<turn|>", calls=[("get_weather", {"city": "Paris", "days": 3})]),
    Case(
        "parallel",
        call("get_weather", f"{{city:{Q}Paris{Q}}}")
        + call("search", f"{{query:{Q}a, {{b}}: c{Q},tags:[{Q}x{Q},{Q}y{Q}],opts:{{exact:true}}}}"),
        calls=[
            ("get_weather", {"city": "Paris"}),
            ("search", {"query": "a, {b}: c", "tags": ["x", "y"], "opts": {"exact": True}}),
        ],
    ),
    Case(
        "no-call", "1 < 2, <|other|> and <b>tags</b> stay.<turn|>", "1 < 2, <|other|> and <b>tags</b> stay."
    ),
    Case(
        "text-before-and-after",
        f"Let me check.\n{WEATHER}\nDone.",
        "Let me check.\n\nDone.",
        [("get_weather", {"city": "Paris", "days": 3})],
    ),
    Case(
        "nested-unicode-escaped",
        call(
            "f",
            f'{{q:{{deep:[1,{{x:null}},-2.5e1,false]}},s:{Q}é 中文 "quoted" \\ \n{Q},e:{Q}😀{Q},'
            f'j:"json \\"str\\"",n:{Q}42{Q},bare:some words}}',
        ),
        calls=[
            (
                "f",
                {
                    "q": {"deep": [1, {"x": None}, -25.0, False]},
                    "s": 'é 中文 "quoted" \\ \n',
                    "e": "😀",
                    "j": 'json "str"',
                    "n": "42",
                    "bare": "some words",
                },
            )
        ],
    ),
    Case("empty-arguments", call("now", "{}"), calls=[("now", {})]),
    Case(
        "marker-in-string",
        call("say", f"{{text:{Q}<tool_call|> and <|tool_call>call:x{{}} and }}, <turn|>{Q}}}") + "after",
        "after",
        [("say", {"text": "<tool_call|> and <|tool_call>call:x{} and }, <turn|>"})],
    ),
    Case(
        "thought-then-call",
        f"<|channel>thought\nThe user wants weather.<channel|>{WEATHER}",
        calls=[("get_weather", {"city": "Paris", "days": 3})],
        reasoning="\nThe user wants weather.",
    ),
    Case(
        "empty-thought-from-the-prompt",
        f"<|channel>thought\n<channel|>Sure.{WEATHER}",
        "Sure.",
        [("get_weather", {"city": "Paris", "days": 3})],
        reasoning="\n",
    ),
    Case(
        "prompt-opened-thought-then-call",
        f"The user wants weather.\n<channel|>{WEATHER}",
        calls=[("get_weather", {"city": "Paris", "days": 3})],
        reasoning="The user wants weather.\n",
        reasoning_open=True,
    ),
    Case(
        "presumed-open-thought-but-the-model-called-at-once",
        f"Checking. {WEATHER}",
        "Checking. ",
        calls=[("get_weather", {"city": "Paris", "days": 3})],
        reasoning_open=True,
    ),
    Case(
        "close-marker-left-out",
        "<|tool_call>call:f{a:1}\n<|tool_call>call:g{b:2}<turn|>",
        calls=[("f", {"a": 1}), ("g", {"b": 2})],
    ),
    Case(
        "malformed-then-text-and-call",
        f"a <|tool_call>get weather{{city:}}<tool_call|> then {WEATHER}",
        "a  then ",
        [("get_weather", {"city": "Paris", "days": 3})],
        errors=1,
    ),
    Case(
        "json-object-between-the-markers",
        '<|tool_call>{"name": "f", "arguments": {"a": 1}}<tool_call|>',
        calls=[("f", {"a": 1})],
    ),
    Case("no-body", "a <|tool_call>call:f<tool_call|> b", "a  b", errors=1),
    Case(
        "unterminated-string",
        f"<|tool_call>call:f{{a:{Q}open}}<tool_call|>after",
        "after",
        errors=1,
    ),
    Case(
        "truncated",
        f"Checking. <|tool_call>call:f{{a:[{Q}x{Q},",
        "Checking. ",
        errors=1,
        truncated=True,
    ),
]
IDS = [case.id for case in CASES]


@pytest.mark.parametrize("fmt", [FAMILY, "auto"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_whole_output(case: Case, fmt: str) -> None:
    check_whole(case, fmt, FAMILY, MARKERS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_character_at_a_time(case: Case) -> None:
    check_chunks(case, FAMILY, range(len(case.text)), MARKERS)


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("case", CASES, ids=IDS)
@given(data=st.data())
def test_random_chunks(case: Case, data: st.DataObject) -> None:
    check_chunks(case, FAMILY, data.draw(random_cuts(case.text)), MARKERS)


def test_call_starts_with_its_name_and_ends_on_the_feed_that_closes_it() -> None:
    parser = StreamParser(FAMILY)
    assert parser.feed("<|tool_call>call:f{")[0] == ToolCallStart("f")
    assert not any(isinstance(e, ToolCallEnd) for e in parser.feed(f"a:{Q}x{Q}}}<tool_call"))
    assert any(isinstance(e, ToolCallEnd) for e in parser.feed("|>"))


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12).filter(lambda s: Q not in s),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5).filter(lambda s: Q not in s), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,20}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=8).filter(lambda s: Q not in s), values, max_size=4),
)
def test_format_call_round_trips(name: str, arguments: dict[str, Any]) -> None:
    text = "Before " + call_format(FAMILY).format_call(name, arguments) + " after"
    result = parse(text, FAMILY)
    assert (result.content, result.errors) == ("Before  after", ())
    assert [(c.name, c.arguments) for c in result.tool_calls] == [(name, arguments)]
    assert ParseResult.from_events(stream(text, range(len(text)), FAMILY)) == result


def test_writes_its_own_dialect() -> None:
    fmt = call_format(FAMILY)
    assert fmt.format_call("f", {"a": "x", "n": 1, "l": [True, None]}) == (
        f"<|tool_call>call:f{{a:{Q}x{Q},n:1,l:[true,null]}}<tool_call|>"
    )


FRAGMENTS = [
    "<|tool_call>",
    "<tool_call|>",
    "call:",
    "f",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    Q,
    "<turn|>",
    "<|channel>thought",
    "<channel|>",
    "<|",
    " ",
    "\n",
    "a",
    "1",
    "true",
    '"',
    "<",
]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_any_text_of_its_fragments_reads_the_same_in_any_chunks(data: st.DataObject) -> None:
    text = data.draw(fragment_text(FRAGMENTS))
    check_fragments(text, FAMILY, data.draw(random_cuts(text)), MARKERS)
