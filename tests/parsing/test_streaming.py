"""Streaming guarantees: any chunking gives the same result as `parse()`, no call markup leaks into
content, and a call ends on the very feed that delivers its closing marker."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest
from family_checks import Case
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from parsing_cases import CASES
from tool_call_tag_harness import arguments_per_call

from toolbridge.parsing import (
    Event,
    ParseResult,
    StreamParser,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    call_format,
    parse,
)

MARKERS = (
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "```tool",
    "<function=",
    "</function>",
    "<parameter=",
    "</parameter>",
    "<arg_key>",
    "</arg_value>",
    "<|channel|>",
    "<|call|>",
    "<|end|>",
    "<|python_tag|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|tool_call>",
    "<tool_call|>",
    '<|"|>',
)


def stream(text: str, cuts: Sequence[int], *, fmt: str = "auto", reasoning_open: bool = False) -> list[Event]:
    parser = StreamParser(fmt, reasoning_open=reasoning_open)
    bounds = [0, *sorted(set(cuts)), len(text)]
    events: list[Event] = []
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(text[start:end])
    return events + parser.finish()


def cuts_for(text: str) -> st.SearchStrategy[list[int]]:
    return st.lists(st.integers(0, len(text)), max_size=max(1, len(text) // 2))


@settings(max_examples=60, deadline=None)
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
@given(data=st.data())
def test_random_chunkings_of_the_corpus_agree_with_parse(case: Case, data: st.DataObject) -> None:
    reasoning_first = bool(case.reasoning_open)
    whole = parse(case.text, case.format, reasoning_open=reasoning_first)
    whole_events = stream(case.text, [], fmt=case.format, reasoning_open=reasoning_first)
    cuts = data.draw(cuts_for(case.text))
    events = stream(case.text, cuts, fmt=case.format, reasoning_open=reasoning_first)
    assert ParseResult.from_events(events) == whole
    assert arguments_per_call(events) == arguments_per_call(whole_events)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_one_chunk_and_one_character_chunks_agree(case: Case) -> None:
    reasoning_first = bool(case.reasoning_open)
    one = stream(case.text, [], fmt=case.format, reasoning_open=reasoning_first)
    chars = stream(case.text, range(len(case.text)), fmt=case.format, reasoning_open=reasoning_first)
    assert ParseResult.from_events(chars) == ParseResult.from_events(one)
    assert arguments_per_call(chars) == arguments_per_call(one)


# Generated outputs: text pieces (full of near-markers) around well-formed calls of both formats.
text_piece = st.text(alphabet="ab <>/`_tolc\n中{}\"'\\", max_size=12)
json_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(alphabet='a}{"\\\n<>/`é😀', max_size=8)
)
arguments = st.dictionaries(
    st.text(alphabet="abc{", min_size=1, max_size=3),
    st.recursive(json_scalar, lambda inner: st.lists(inner, max_size=3), max_leaves=5),
    max_size=3,
)
tool_name = st.text(alphabet="abcdefgh_", min_size=1, max_size=8)


# A body that is not valid for any `<tool_call>` dialect: another dialect's tags, a pythonic call, loose
# '<'s. Its alphabet cannot spell a marker, and it starts neither with `{` or `[` (JSON), `<function=`
# (Qwen3 XML) nor a name followed by white space or `<` (GLM), so the body decides for no dialect.
# (Whitespace before a body is not kept in its raw text, so a non-empty body starts with something else.)
invalid_body = st.just("") | st.tuples(
    st.sampled_from(["<parameter=a>", "f(", "<", "<b>", "=", "a="]),
    st.text(alphabet='ab <>/=_\n中"{}', max_size=16),
).map("".join)
# Bare-text values (qwen3_xml, glm) read without a schema: text stays text, JSON arrays are decoded.
bare_text_value = st.one_of(
    st.text(alphabet='a}{"\\\n<>/`é😀 ', max_size=8).filter(lambda text: text.strip()[:1] not in "{["),
    st.lists(json_scalar, max_size=3),
)
bare_text_arguments = st.dictionaries(
    st.text(alphabet="abc{", min_size=1, max_size=3), bare_text_value, max_size=3
)

GeneratedCall = tuple[str, str | None, dict[str, Any], str]
"""(markup, name, arguments, arguments JSON as written); name None: an invalid call, a parse error."""


@st.composite
def tool_call(draw: st.DrawFn) -> GeneratedCall:
    kind = draw(
        st.sampled_from(
            [
                "hermes",
                "fenced",
                "harmony",
                "invalid",
                "qwen3_xml",
                "glm",
                "llama3_json",
                "llama_pythonic",
                "gemma",
            ]
        )
    )
    if kind == "invalid":
        return f"<tool_call>{draw(invalid_body)}</tool_call>", None, {}, ""
    name = draw(tool_name)
    if kind in ("qwen3_xml", "glm"):
        args = draw(bare_text_arguments)
        return call_format(kind).format_call(name, args), name, args, json.dumps(args, ensure_ascii=False)
    args = draw(arguments)
    args_json = json.dumps(args, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 2])))
    if kind in ("llama_pythonic", "gemma"):
        # Written by the dialect itself; their argument deltas are JSON (pythonic) or the body as written.
        markup = call_format(kind).format_call(name, args)
        if kind == "llama_pythonic":
            return f"<|python_start|>{markup}<|python_end|>", name, args, json.dumps(args, ensure_ascii=False)
        return markup, name, args, markup[markup.index("{") : -len("<tool_call|>")]
    if kind == "llama3_json":
        body = '{"name": ' + json.dumps(name) + ', "parameters": ' + args_json + "}"
        return f"<|python_tag|>{body}", name, args, args_json
    if kind == "hermes":
        body = '{"name": ' + json.dumps(name) + ', "arguments": ' + args_json + "}"
        return f"<tool_call>{draw(st.sampled_from(['', chr(10)]))}{body}\n</tool_call>", name, args, args_json
    if kind == "harmony":
        header = draw(st.sampled_from(["<|channel|>commentary to=functions.", "<|start|>assistant to="]))
        rest = " <|constrain|>json" if header.startswith("<|channel|>") else "<|channel|>commentary json"
        return f"{header}{name}{rest}<|message|>{args_json}<|call|>", name, args, args_json
    label = draw(st.sampled_from(["工具名称: ", "name: "]))
    args_label = draw(st.sampled_from(["参数: ", "arguments: "]))
    return f"```tool\n{label}{name}\n{args_label}{args_json}\n```", name, args, args_json


@st.composite
def model_output(draw: st.DrawFn) -> tuple[list[str], list[GeneratedCall]]:
    texts = [draw(text_piece)]
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        calls.append(draw(tool_call()))
        texts.append(draw(text_piece))
    return texts, calls


@settings(max_examples=300, deadline=None)
@given(output=model_output(), data=st.data())
def test_generated_outputs_any_chunking_same_calls_and_no_markup_in_content(
    output: tuple[list[str], list[GeneratedCall]], data: st.DataObject
) -> None:
    texts, calls = output
    text = texts[0] + "".join(call[0] + after for call, after in zip(calls, texts[1:], strict=True))
    # Only the calls may contain markers; a text piece that forms one on its own or with a neighbour is
    # a different output.
    for marker in MARKERS:
        assume(text.count(marker) == sum(call[0].count(marker) for call in calls))
    cuts = data.draw(cuts_for(text))
    events = stream(text, cuts)
    result = ParseResult.from_events(events)
    assert result == parse(text, reasoning_open=False)
    assert result == ParseResult.from_events(stream(text, range(len(text))))
    # An invalid call is reported and swallows nothing: the text after it and later calls are found.
    assert result.content == content_between_calls(texts, calls)
    valid = [call for call in calls if call[1] is not None]
    assert [(call.name, call.arguments) for call in result.tool_calls] == [(c[1], c[2]) for c in valid]
    assert arguments_per_call(events) == [c[3] for c in valid]
    assert [error.raw for error in result.errors] == [c[0] for c in calls if c[1] is None]
    for event in events:
        if isinstance(event, TextDelta):
            assert not any(marker in event.text for marker in MARKERS)


def content_between_calls(texts: list[str], calls: list[GeneratedCall]) -> str:
    """The pieces of text between calls as content: exactly as written, white space and all, but for
    white space ending the output right after a call with no closing marker (Llama 3 JSON): it is read
    with the call, while another could still follow it."""
    content = "".join(texts)
    if calls and calls[-1][0].startswith("<|python_tag|>") and not texts[-1].strip():
        content = content[: len(content) - len(texts[-1])]
    return content


INVALID_THEN_VALID = (
    "Let me look. <tool_call>\nget_weather(city=<Paris>)\n<parameter=city>\nParis\n</parameter>\n"
    "</function>\n</tool_call>\nOops, again: "
    '<tool_call>{"name": "get_weather", "arguments": {"city": "<Paris>"}}</tool_call> Done.'
)


@pytest.mark.parametrize("chunk_size", [len(INVALID_THEN_VALID), 97, 40, 13, 5, 1])
def test_a_body_that_is_not_json_swallows_nothing_after_it(chunk_size: int) -> None:
    parser = StreamParser("hermes")
    events: list[Event] = []
    end_feed: int | None = None
    for start in range(0, len(INVALID_THEN_VALID), chunk_size):
        fed = parser.feed(INVALID_THEN_VALID[start : start + chunk_size])
        if any(isinstance(event, ToolCallEnd) for event in fed):
            end_feed = start
        events += fed
    events += parser.finish()
    result = ParseResult.from_events(events)
    assert result.content == "Let me look. \nOops, again:  Done."
    [error] = result.errors
    assert error.raw == (
        "<tool_call>get_weather(city=<Paris>)\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    )  # whole, but for the whitespace before the body, which is never kept
    assert "not a JSON object" in error.message
    assert [(call.name, call.arguments) for call in result.tool_calls] == [
        ("get_weather", {"city": "<Paris>"})
    ]
    assert end_feed is not None  # the later call ends while streaming, not only at finish()
    assert result == parse(INVALID_THEN_VALID, "hermes")


@pytest.mark.parametrize(
    ("before", "call", "after"),
    [
        ("Checking. ", '<tool_call>{"name": "f", "arguments": {"a": "}"}}</tool_call>', " more"),
        ("", '<tool_call>{"name": "f", "arguments": {"a": 1}</tool_call>', "x"),
        ("好的\n", '```tool\n工具名称: calculate\n参数: {"expression": "1+1"}\n```', "\nrest"),
    ],
)
def test_tool_call_end_comes_on_the_feed_that_delivers_the_closing_marker(
    before: str, call: str, after: str
) -> None:
    for chunk_size in (1, 3, 7, len(before + call)):
        parser = StreamParser()
        text = before + call
        ends: list[int] = []
        for start in range(0, len(text), chunk_size):
            events = parser.feed(text[start : start + chunk_size])
            ends += [start for e in events if isinstance(e, ToolCallEnd)]
        assert len(ends) == 1, chunk_size
        assert ends[0] + chunk_size >= len(text)  # the feed that carried the last character
        assert not any(isinstance(e, ToolCallEnd) for e in parser.feed(after) + parser.finish())


def test_tool_call_start_comes_as_soon_as_the_name_is_complete() -> None:
    parser = StreamParser()
    assert parser.feed('<tool_call>{"name": "get_wea') == []
    assert parser.feed('ther", "arguments": {"ci') == [
        ToolCallStart("get_weather"),
        ToolCallArgumentsDelta('{"ci'),
    ]
    assert parser.feed('ty": "Paris"}}') == [ToolCallArgumentsDelta('ty": "Paris"}')]


def test_plain_text_is_never_held_back() -> None:
    parser = StreamParser()
    assert parser.feed("Hello") == [TextDelta("Hello")]
    assert parser.feed(" a < b") == [TextDelta(" a < b")]
    assert parser.feed("<") == []  # could be a marker
    assert parser.feed("p>") == [TextDelta("<p>")]
    assert parser.feed("``") == []
    assert parser.feed("`js") == [TextDelta("```js")]
    assert parser.feed("<tool_ca") == []
    assert parser.finish() == [TextDelta("<tool_ca")]


def test_the_start_is_held_only_while_it_could_begin_a_call_header() -> None:
    parser = StreamParser()  # gpt-oss may start inside a header: ` to=functions.NAME<|channel|>...`
    assert parser.feed("to") == []
    assert parser.feed("day") == [TextDelta("today")]
    assert parser.feed(" to=functions.f") == [TextDelta(" to=functions.f")]  # only at the start
    assert StreamParser("hermes").feed("to") == [TextDelta("to")]  # no format of it starts so


def test_parsers_share_no_state_not_even_cached_events() -> None:
    # One-character deltas reuse event objects within a parser (that is the fast path), never across
    # parsers: a module-level cache would be state shared by every stream in the process.
    first, second = StreamParser(), StreamParser()
    first.feed("x")  # the fast path starts once a parser has shown text
    second.feed("x")
    [a1], [a2] = first.feed("a"), first.feed("a")
    [b1] = second.feed("a")
    assert a1 is a2
    assert a1 == b1
    assert a1 is not b1
