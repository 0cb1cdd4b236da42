"""`llama3_json`: Llama 3.x's bare JSON calls, with or without `<|python_tag|>`, `;` between calls
(docs/dialects.md#llama3_json), read the same whole, one character at a time and in random chunks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from family_checks import (
    Case,
    check_chunks,
    check_fragments,
    check_no_markers,
    check_whole,
    fragment_text,
    random_cuts,
    stream,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbridge.parsing import ParseResult, StreamParser, ToolCallEnd, ToolCallStart, call_format, parse

FAMILY = "llama3_json"
MARKERS = ("<|python_tag|>", "<|eom_id|>", "<|eot_id|>")
TAG = "<|python_tag|>"
WEATHER = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
TIME = '{"name": "get_time", "parameters": {"tz": "CET"}}'
NESTED = {"q": {"deep": [1, {"x": None}, 2.5, True]}, "s": 'é 中文 "quoted" \\ \n {}', "e": "😀"}

CASES = [
    Case("single", WEATHER, calls=[("get_weather", {"city": "Paris"})]),
    Case("single-python-tag", f"{TAG}{WEATHER}<|eom_id|>", calls=[("get_weather", {"city": "Paris"})]),
    Case("arguments-key", '{"name": "f", "arguments": {"a": 1}}<|eot_id|>', calls=[("f", {"a": 1})]),
    Case(
        "type-function-key-ignored",
        '{"type": "function", "name": "f", "parameters": {"a": 1}}',
        calls=[("f", {"a": 1})],
    ),
    Case(
        "openai-shape",
        '{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}',
        calls=[("f", {"a": 1})],
    ),
    Case(
        "parallel-python-tag",
        f"{TAG}{WEATHER}; {TIME}<|eom_id|>",
        calls=[("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
    ),
    Case(
        "parallel-bare-newline",
        f"{WEATHER};\n{TIME}",
        calls=[("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
    ),
    Case(
        "no-call",
        'The answer is {"city": "Paris"}, {"name": "Bob", "age": 3}; {x}, {"name": "Al", "arguments": 5}'
        ' and { "type": "object" }.<|eot_id|>',
        'The answer is {"city": "Paris"}, {"name": "Bob", "age": 3}; {x}, {"name": "Al", "arguments": 5}'
        ' and { "type": "object" }.',
    ),
    Case(
        "text-before-and-after",
        f"Let me check.\n{TIME}\nDone; thanks.",
        "Let me check.\n\nDone; thanks.",
        [("get_time", {"tz": "CET"})],
    ),
    Case(
        "separator-then-text",
        f"Sure. {WEATHER}; and more",
        "Sure.  and more",
        [("get_weather", {"city": "Paris"})],
    ),
    Case(
        "nested-unicode-escaped",
        json.dumps({"name": "f", "parameters": NESTED}, ensure_ascii=True),
        calls=[("f", NESTED)],
    ),
    Case(
        "pretty-printed",
        json.dumps({"name": "f", "parameters": NESTED}, ensure_ascii=False, indent=2),
        calls=[("f", NESTED)],
    ),
    Case("empty-arguments", '{"name": "now", "parameters": {}}', calls=[("now", {})]),
    Case(
        "marker-in-string",
        '{"name": "say", "parameters": {"text": "<|eot_id|> {\\"name\\": 1}; <|python_tag|>"}} after',
        " after",
        [("say", {"text": '<|eot_id|> {"name": 1}; <|python_tag|>'})],
    ),
    Case(
        "built-in-tool",
        f'{TAG}brave_search.call(query="weather in Paris")<|eom_id|>',
        calls=[("brave_search", {"query": "weather in Paris"})],
    ),
    Case(
        "reasoning-then-call",
        f"<think>The user wants weather.</think>{WEATHER}",
        calls=[("get_weather", {"city": "Paris"})],
        reasoning="The user wants weather.",
    ),
    Case(
        "prompt-opened-reasoning-then-call",
        f"The user wants weather.\n</think>\n\n{TAG}{WEATHER}",
        calls=[("get_weather", {"city": "Paris"})],
        reasoning="The user wants weather.\n",
        reasoning_open=True,
        content="\n\n",
    ),
    Case(
        "cut-by-end-of-turn-then-text-and-call",
        f'{TAG}{{"name": "f", "parameters": {{"a": 1<|eom_id|> then {TIME}',
        " then ",
        [("get_time", {"tz": "CET"})],
        errors=1,
    ),
    Case("tag-without-a-call", f"{TAG}hello there<|eot_id|> after", " after", errors=1),
    Case("arguments-cut-at-the-end", f'{TAG}{{"name": "f", "parameters": {{"a": [1, 2', errors=1),
    Case(
        "only-the-last-brace-missing",
        f'{TAG}{{"name": "f", "parameters": {{"a": 1}}',
        calls=[("f", {"a": 1})],
    ),
    Case(
        "unterminated-string",
        f'{TAG}{{"name": "f", "parameters": {{"a": "open}}}}<|eot_id|>after',
        "after",
        errors=1,
    ),
    Case(
        "truncated",
        'Checking. {"name": "f", "parameters": {"a": [1, ',
        "Checking. ",
        errors=1,
        truncated=True,
    ),
    Case(
        "list-of-calls",
        f"Checking both.\n[ {WEATHER},\n  {TIME} ]\nDone.",
        "Checking both.\n\nDone.",
        [("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
    ),
    Case("list-of-one-call-at-the-end", f"[{WEATHER}]", calls=[("get_weather", {"city": "Paris"})]),
    Case(
        "lists-that-are-no-calls",
        'Pick [1, 2] or [see](x) or [{"city": "Paris"}] or [ "a" ] or [] or [',
        'Pick [1, 2] or [see](x) or [{"city": "Paris"}] or [ "a" ] or [] or [',
    ),
    Case(
        "list-left-open-after-a-call",
        f"[{WEATHER}, ",
        calls=[("get_weather", {"city": "Paris"})],
        truncated=True,
    ),
    Case(
        "truncated-after-a-complete-call",
        f"{TAG}{WEATHER}",
        calls=[("get_weather", {"city": "Paris"})],
        truncated=True,
    ),
]
IDS = [case.id for case in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_whole_output(case: Case) -> None:
    check_whole(case, FAMILY, FAMILY, MARKERS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_one_character_at_a_time(case: Case) -> None:
    check_chunks(case, FAMILY, range(len(case.text)), MARKERS)


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("case", CASES, ids=IDS)
@given(data=st.data())
def test_random_chunks(case: Case, data: st.DataObject) -> None:
    check_chunks(case, FAMILY, data.draw(random_cuts(case.text)), MARKERS)


@pytest.mark.parametrize(
    "text",
    [f"{TAG}{WEATHER}<|eom_id|>", f"x {TAG}{WEATHER}; {TIME}"],
)
def test_python_tag_calls_are_found_in_auto(text: str) -> None:
    result = parse(text, "auto")
    assert [call.format for call in result.tool_calls] == [FAMILY] * text.count('"name"')
    check_no_markers(stream(text, range(len(text)), "auto"), MARKERS)


def test_bare_json_is_text_in_auto() -> None:
    result = parse(f"Here: {WEATHER}", "auto")
    assert (result.content, result.tool_calls) == (f"Here: {WEATHER}", ())


def test_call_ends_on_the_feed_that_balances_its_json() -> None:
    parser = StreamParser(FAMILY)
    early = parser.feed('{"name": "f", "parameters": {"a": {"b": 1}}')
    assert ToolCallStart("f") in early
    assert not any(isinstance(e, ToolCallEnd) for e in early)
    assert any(isinstance(e, ToolCallEnd) for e in parser.feed("}"))


def test_a_bare_object_is_announced_only_once_it_has_a_name_and_arguments() -> None:
    parser = StreamParser(FAMILY)
    assert parser.feed('{"name": "Bob", ') == []
    assert parser.feed('"parameters": {')[0] == ToolCallStart("Bob")


arguments_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,20}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=8), arguments_values, max_size=4),
)
def test_format_call_round_trips(name: str, arguments: dict[str, Any]) -> None:
    text = "Before " + call_format(FAMILY).format_call(name, arguments) + " after"
    result = parse(text, FAMILY)
    assert (result.content, result.errors) == ("Before  after", ())
    assert [(c.name, c.arguments) for c in result.tool_calls] == [(name, arguments)]
    assert ParseResult.from_events(stream(text, range(len(text)), FAMILY)) == result


def test_writes_its_own_dialect() -> None:
    fmt = call_format(FAMILY)
    assert fmt.format_call("get_time", {"tz": "CET"}) == '{"name": "get_time", "parameters": {"tz": "CET"}}'
    assert '"parameters"' in fmt.call_instructions


FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    '"name"',
    '"parameters"',
    '"type"',
    ": ",
    '"f"',
    ", ",
    ";",
    " ",
    "\n",
    TAG,
    "<|eom_id|>",
    "<|eot_id|>",
    "<|",
    '"',
    "\\",
    "a",
    "1",
    "<think>",
    "</think>",
    "f(x=1)",
    ".call(",
]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_any_text_of_its_fragments_reads_the_same_in_any_chunks(data: st.DataObject) -> None:
    text = data.draw(fragment_text(FRAGMENTS))
    check_fragments(text, FAMILY, data.draw(random_cuts(text)), MARKERS)
