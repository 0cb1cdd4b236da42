"""`llama_pythonic`: Llama 4's (and Llama 3.2's) `[f(a=1), g(b="x")]`, bare or inside
`<|python_start|>`...`<|python_end|>` (docs/dialects.md#llama_pythonic), read the same whole, one
character at a time and in random chunks."""

from __future__ import annotations

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

from toolbridge.parsing import ParseResult, StreamParser, ToolCallEnd, call_format, parse

FAMILY = "llama_pythonic"
MARKERS = ("<|python_start|>", "<|python_end|>", "<|eot|>", "<|eot_id|>")
START, END = "<|python_start|>", "<|python_end|>"
NESTED = {"q": {"deep": [1, {"x": None}, -2.5, True]}, "s": 'é 中文 "quoted" \\ \n', "e": "😀", "t": [1, 2]}

CASES = [
    Case("single", '[get_weather(city="Paris")]', calls=[("get_weather", {"city": "Paris"})]),
    Case(
        "parallel",
        "[get_weather(city=\"Paris\", days=3), get_time(tz='Europe/Paris')]<|eot|>",
        calls=[("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"tz": "Europe/Paris"})],
    ),
    Case(
        "python-start-and-end",
        f'{START}[get_weather(city="Paris")]{END}<|eot_id|>',
        calls=[("get_weather", {"city": "Paris"})],
    ),
    Case(
        "python-start-without-brackets",
        f'{START}get_weather(city="Paris"){END} ok',
        " ok",
        [("get_weather", {"city": "Paris"})],
    ),
    Case(
        "no-call",
        "See [the docs](https://x.y/z), [1, 2], [see (below)], [ f(a=1)], [f(x)] and [f(a=g())].<|eot|>",
        "See [the docs](https://x.y/z), [1, 2], [see (below)], [ f(a=1)], [f(x)] and [f(a=g())].",
    ),
    Case(
        "text-before-and-after",
        'Let me check.\n[get_time(tz="CET")]\nDone.',
        "Let me check.\n\nDone.",
        [("get_time", {"tz": "CET"})],
    ),
    Case(
        "nested-unicode-escaped",
        "[f(q={'deep': [1, {'x': None}, -2.5, True]}, s='é 中文 \"quoted\" \\\\ \\n', e=\"\\U0001F600\","
        " t=(1, 2))]",
        calls=[("f", NESTED)],
    ),
    Case(
        "json-literals-and-spacing",
        "[f( a = true , b=null, c=[1, 2,], ), g()]",
        calls=[("f", {"a": True, "b": None, "c": [1, 2]}), ("g", {})],
    ),
    Case("empty-arguments", "[now()]", calls=[("now", {})]),
    Case(
        "raw-line-break-in-a-string",
        "[write(path='a.txt', content=\"line 1\nline 2\\n\")]",
        calls=[("write", {"path": "a.txt", "content": "line 1\nline 2\n"})],
    ),
    Case(
        "marker-in-string",
        "[say(text=\"<|python_end|>], g(x=1) ) <|eot|>\", other='[a(b=1)]')] after",
        " after",
        [("say", {"text": "<|python_end|>], g(x=1) ) <|eot|>", "other": "[a(b=1)]"})],
    ),
    Case(
        "keys-that-are-not-names",
        '[f(**{"a b": 1, "from": 2}), dash-name(x=1)]',
        calls=[("f", {"a b": 1, "from": 2}), ("dash-name", {"x": 1})],
    ),
    Case(
        "reasoning-then-call",
        "<think>Need weather.</think>[get_weather(city='Rome')]",
        calls=[("get_weather", {"city": "Rome"})],
        reasoning="Need weather.",
    ),
    Case(
        "prompt-opened-reasoning-then-call",
        "Need weather.\n</think>\n\n[get_weather(city='Rome')]",
        calls=[("get_weather", {"city": "Rome"})],
        reasoning="Need weather.\n",
        reasoning_open=True,
        content="\n\n",
    ),
    Case(
        "malformed-call-in-a-list-then-text-and-call",
        "[f(a=1), g(x), h(b=2)] then [k()]",
        " then ",
        [("f", {"a": 1}), ("h", {"b": 2}), ("k", {})],
        errors=1,
    ),
    Case(
        "malformed-after-python-start",
        f"{START}[get weather(city='Paris')]{END} after [k()]",
        " weather(city='Paris')] after ",
        [("k", {})],
        errors=1,
    ),
    Case("cut-by-end-of-turn", f"{START}[f(a=[1, 2<|eot|>after", "after", errors=1),
    Case("names-kept-as-written", '[get(ª=1, ﬁle="x")]', calls=[("get", {"ª": 1, "ﬁle": "x"})]),  # not NFKC
    Case("unclosed-bare-bracket-is-text", "a [f(x, 'y' and more", "a [f(x, 'y' and more"),
    # A bare call cut short is an error, never text and never a call with its brackets closed for it.
    Case("bare-call-cut-at-the-end", "Checking. [get(a=1", "Checking. ", errors=1),
    Case("bare-call-cut-in-a-list", '[get(a=[1, {"b": 2', errors=1),
    Case("bare-call-cut-in-a-string", "[say(text='half", errors=1),
    Case("bare-call-cut-by-end-of-turn", "[get(a=1<|eot|>after", "after", errors=1),
    Case("truncated", f"Checking. {START}[f(a=[1, ", "Checking. ", errors=1, truncated=True),
    Case("truncated-after-a-complete-call", "[f(a=1), ", calls=[("f", {"a": 1})], truncated=True),
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


def test_python_start_calls_are_found_in_auto_and_a_bare_list_is_text() -> None:
    text = f'[get_weather(city="Paris")] and {START}[get_time(tz="CET")]{END}'
    result = parse(text, "auto")
    assert result.content == '[get_weather(city="Paris")] and '
    assert [(call.name, call.format) for call in result.tool_calls] == [("get_time", FAMILY)]
    check_no_markers(stream(text, range(len(text)), "auto"), MARKERS)


def test_each_call_ends_on_the_feed_that_closes_it() -> None:
    parser = StreamParser(FAMILY)
    assert not any(isinstance(e, ToolCallEnd) for e in parser.feed("[f(a=(1, 2)"))
    assert any(isinstance(e, ToolCallEnd) for e in parser.feed(")"))
    assert not any(isinstance(e, ToolCallEnd) for e in parser.feed(", g(b='x'"))
    assert any(isinstance(e, ToolCallEnd) for e in parser.feed(")"))


values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,20}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=8), values, max_size=4),
)
def test_format_call_round_trips(name: str, arguments: dict[str, Any]) -> None:
    text = "Before " + call_format(FAMILY).format_call(name, arguments) + " after"
    result = parse(text, FAMILY)
    assert (result.content, result.errors) == ("Before  after", ())
    assert [(c.name, c.arguments) for c in result.tool_calls] == [(name, arguments)]
    assert ParseResult.from_events(stream(text, range(len(text)), FAMILY)) == result


def test_writes_its_own_dialect() -> None:
    fmt = call_format(FAMILY)
    assert fmt.format_call("f", {"a": 1, "b": "x", "c": None}) == '[f(a=1, b="x", c=None)]'


FRAGMENTS = [
    "[",
    "]",
    "(",
    ")",
    "f",
    "=",
    "1",
    "'",
    '"',
    "\\",
    ",",
    " ",
    "\n",
    START,
    END,
    "<|eot|>",
    "<|",
    "{",
    "}",
    ":",
    "True",
    "**",
    "<think>",
    "</think>",
    "x-y",
]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_any_text_of_its_fragments_reads_the_same_in_any_chunks(data: st.DataObject) -> None:
    text = data.draw(fragment_text(FRAGMENTS))
    check_fragments(text, FAMILY, data.draw(random_cuts(text)), MARKERS)
