"""`harmony` (gpt-oss): channels, recipients and calls from the documented format (docs/dialects.md), read
whole, one character at a time and in random chunks with identical results."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
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
    call_format,
    parse,
)

MARKERS = (
    "<|start|>",
    "<|channel|>",
    "<|message|>",
    "<|constrain|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
    "<|endoftext|>",
)


def analysis(text: str) -> str:
    return f"<|channel|>analysis<|message|>{text}<|end|>"


def call(name: str, arguments: str, *, constrain: str = " <|constrain|>json") -> str:
    """A call as gpt-oss writes it: recipient after the channel (the prompt ended in `<|start|>assistant`)."""
    return f"<|channel|>commentary to={name}{constrain}<|message|>{arguments}<|call|>"


def next_call(name: str, arguments: str) -> str:
    """A later call, recipient in the role header as the chat template writes past calls."""
    return f"<|start|>assistant to={name}<|channel|>commentary json<|message|>{arguments}<|call|>"


def final(text: str) -> str:
    return f"<|start|>assistant<|channel|>final<|message|>{text}<|return|>"


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str = ""
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    errors: int = 0
    reasoning: str = ""
    reasoning_open: bool = False


NESTED = (
    '{"path": "/tmp/é.txt", "data": {"l": [1, 2.5, null, true], "s": "line\\nquote\\" brace} \\u00e9 日本"}}'
)

CASES = [
    Case(
        "single",
        call("functions.get_weather", '{"city": "Paris"}'),
        calls=[("get_weather", {"city": "Paris"})],
    ),
    Case(
        "parallel",
        call("functions.get_weather", '{"city": "Paris"}') + next_call("functions.get_time", '{"tz": "CET"}'),
        calls=[("get_weather", {"city": "Paris"}), ("get_time", {"tz": "CET"})],
    ),
    Case(
        "no_call",
        analysis("Easy.") + final("It is sunny. 1 < 2, <|other|> and <b> stay."),
        "It is sunny. 1 < 2, <|other|> and <b> stay.",
        reasoning="Easy.",
    ),
    Case(
        "text_before_and_after",
        "<|channel|>commentary<|message|>Let me check.<|end|><|start|>assistant"
        + call("functions.get_weather", '{"city": "Oslo"}')
        + final("Done."),
        "Let me check.Done.",
        [("get_weather", {"city": "Oslo"})],
    ),
    Case(
        "nested_unicode_escaped",
        call("functions.write", NESTED),
        calls=[("write", json.loads(NESTED))],
    ),
    Case(
        "empty_arguments",
        call("functions.now", "{}") + next_call("functions.later", ""),
        calls=[("now", {}), ("later", {})],
    ),
    Case(
        "marker_inside_a_string",
        call("functions.echo", '{"text": "<|call|><|end|><|start|>assistant<|channel|>final<|message|>x"}')
        + final("ok"),
        "ok",
        [("echo", {"text": "<|call|><|end|><|start|>assistant<|channel|>final<|message|>x"})],
    ),
    Case(
        "reasoning_then_call",
        analysis("Need the weather.")
        + "<|start|>assistant"
        + call("functions.get_weather", '{"city": "Rome"}'),
        calls=[("get_weather", {"city": "Rome"})],
        reasoning="Need the weather.",
    ),
    Case(
        "prompt_opened_reasoning_then_call",
        "Need the weather.<|end|><|start|>assistant" + call("functions.get_weather", '{"city": "Rome"}'),
        calls=[("get_weather", {"city": "Rome"})],
        reasoning="Need the weather.",
        reasoning_open=True,
    ),
    Case(
        "presumed_open_analysis_but_the_prompt_ended_in_the_start_header",
        "<|channel|>final<|message|>It is sunny.",
        "It is sunny.",
        reasoning_open=True,
    ),
    Case(
        "presumed_open_analysis_and_a_call_header_decides",
        call("functions.get_weather", '{"city": "Rome"}'),
        calls=[("get_weather", {"city": "Rome"})],
        reasoning_open=True,
    ),
    Case(
        "constrain_missing_or_glued_or_plain_json",
        call("functions.a", '{"x": 1}', constrain="")
        + call("functions.b", '{"x": 2}', constrain="<|constrain|>json")
        + call("functions.c", '{"x": 3}', constrain=" json"),
        calls=[("a", {"x": 1}), ("b", {"x": 2}), ("c", {"x": 3})],
    ),
    Case(
        "call_on_the_analysis_channel",
        "<|channel|>analysis to=functions.f <|constrain|>json<|message|>{}<|call|>",
        calls=[("f", {})],
    ),
    Case(
        "built_in_recipients",
        call("browser.search", '{"query": "gpt-oss"}', constrain="")
        + call("python", "print(1 < 2)\n", constrain=""),
        calls=[("browser.search", {"query": "gpt-oss"}), ("python", {"code": "print(1 < 2)\n"})],
    ),
    Case(
        "call_end_token_left_out",
        '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1}' + final("Hi"),
        "Hi",
        [("f", {"a": 1})],
    ),
    Case(
        "call_end_token_stripped_by_the_server",
        '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1}',
        calls=[("f", {"a": 1})],
    ),
    Case(
        "malformed_then_text_and_a_call",
        "a" + call("functions.f", "not json") + "after" + next_call("functions.g", '{"x": 1}'),
        "aafter",
        [("g", {"x": 1})],
        errors=1,
    ),
    Case(
        "arguments_cut_by_the_call_end",
        "a" + call("functions.f", '{"a": [1, 2') + "after" + next_call("functions.g", '{"x": "y'),
        "aafter",
        errors=2,
    ),
    Case(
        "header_without_message",
        "a<|channel|>commentary to=functions.f<|call|>after",
        "aafter",
        errors=1,
    ),
    Case(
        "truncated_mid_call",
        "Checking.<|end|><|start|>assistant"
        + '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": [1, ',
        reasoning="Checking.",
        errors=1,
        reasoning_open=True,
    ),
    Case(
        "stray_tokens_dropped",
        "<|channel|>final<|message|>x<|end|>y<|call|>z<|return|><|message|><|constrain|><|endoftext|><|start|>assistant",
        "xyz",
    ),
    Case(
        "starts_in_the_role_header",  # the prompt ended in `<|start|>assistant`
        ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>',
        calls=[("get_weather", {"city": "Paris"})],
    ),
    Case(
        "starts_in_the_role_header_on_the_analysis_channel_end_token_stripped",
        ' to=functions.get_weather<|channel|>analysis <|constrain|>json<|message|>{"city": "Paris"}',
        calls=[("get_weather", {"city": "Paris"})],
    ),
    Case(
        "starts_in_the_channel_header",  # the prompt ended in `<|start|>assistant<|channel|>`
        'commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>'
        + final("Done."),
        "Done.",
        [("get_weather", {"city": "Paris"})],
    ),
    Case(
        "starts_in_the_header_though_reasoning_was_presumed_open",
        'to=functions.f<|channel|>commentary<|message|>{"a": 1}<|call|>'
        + next_call("functions.g", '{"b": 2}'),
        calls=[("f", {"a": 1}), ("g", {"b": 2})],
        reasoning_open=True,
    ),
    Case(
        "a_recipient_later_in_the_text_is_text",
        "to be sent to=functions.f later" + final(" or to=functions.g"),
        "to be sent to=functions.f later or to=functions.g",
    ),
    Case("ends_with_a_marker_that_could_have_grown", "Hi<|channel|>", "Hi"),
    Case("another_dialects_tag_ends_a_header", "<|channel|>x</think>y", "xy"),
    Case(
        "stray_channel_in_prose",
        "The <|channel|> token\nopens a header.",
        "The  token\nopens a header.",  # only the marker goes
    ),
]


def check(result: ParseResult, case: Case) -> None:
    assert result.content == case.content
    assert result.reasoning == case.reasoning
    assert [(c.name, c.arguments) for c in result.tool_calls] == case.calls
    assert all(c.format == "harmony" and c.id is None for c in result.tool_calls)
    assert len(result.errors) == case.errors, result.errors


def stream(text: str, cuts: Sequence[int], *, reasoning_open: bool, fmt: str = "harmony") -> list[Event]:
    parser = StreamParser(fmt, reasoning_open=reasoning_open)
    bounds = [0, *sorted(set(cuts)), len(text)]
    events: list[Event] = []
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(text[start:end])
    return events + parser.finish()


def no_markup(events: Sequence[Event]) -> None:
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta):
            assert not any(marker in event.text for marker in MARKERS), event


@pytest.mark.parametrize("fmt", ["harmony", "auto"])
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_harmony_whole_output(case: Case, fmt: str) -> None:
    check(parse(case.text, fmt, reasoning_open=case.reasoning_open), case)
    check(parse(case.text, fmt), case)  # parse() works out a prompt-opened analysis itself


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_harmony_one_character_at_a_time(case: Case) -> None:
    events = stream(case.text, range(len(case.text)), reasoning_open=case.reasoning_open)
    check(ParseResult.from_events(events), case)
    no_markup(events)
    whole = stream(case.text, [], reasoning_open=case.reasoning_open)
    assert ParseResult.from_events(events) == ParseResult.from_events(whole)
    assert arguments(events) == arguments(whole)


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
@given(data=st.data())
def test_harmony_random_chunks_agree_with_whole(case: Case, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(case.text)), max_size=max(1, len(case.text) // 3)))
    events = stream(case.text, cuts, reasoning_open=case.reasoning_open)
    no_markup(events)
    assert ParseResult.from_events(events) == parse(case.text, "harmony", reasoning_open=case.reasoning_open)


def arguments(events: Sequence[Event]) -> list[str]:
    found: list[str] = []
    for event in events:
        if isinstance(event, ToolCallStart):
            found.append("")
        elif isinstance(event, ToolCallArgumentsDelta):
            found[-1] += event.text
    return found


def test_harmony_truncated_output_is_no_call() -> None:
    text = call("functions.f", '{"a": 1}')[: -len("<|call|>")]
    assert [c.name for c in parse(text, "harmony").tool_calls] == ["f"]  # the server dropped <|call|>
    result = parse(text, "harmony", truncated=True)
    assert (result.tool_calls, len(result.errors)) == ((), 1)


def test_harmony_call_ends_on_the_feed_that_completes_it() -> None:
    parser = StreamParser("harmony")
    early = parser.feed('<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1}<|ca')
    assert not any(isinstance(e, ToolCallEnd) for e in early)
    assert [type(e) for e in early][:2] == [ToolCallStart, ToolCallArgumentsDelta]
    assert isinstance(parser.feed("ll|>")[-1], ToolCallEnd)


def test_harmony_arguments_stream_as_they_arrive() -> None:
    parser = StreamParser("harmony")
    events = parser.feed('<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": "x')
    assert events == [ToolCallStart("f"), ToolCallArgumentsDelta('{"a": "x')]
    assert parser.feed("y") == [ToolCallArgumentsDelta("y")]


def test_harmony_final_answer_streams_as_content() -> None:
    parser = StreamParser("harmony", reasoning_open=True)
    assert parser.feed("Easy.") == []  # held: only the output shows whether the prompt opened analysis
    assert parser.feed("<|end|><|start|>assistant<|channel|>final<|message|>It is") == [
        ReasoningDelta("Easy."),
        TextDelta("It is"),
    ]
    assert parser.feed(" sunny.") == [TextDelta(" sunny.")]


arguments_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None)
@given(
    name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True),
    arguments=st.dictionaries(st.text(max_size=8), arguments_values, max_size=4),
)
def test_harmony_round_trip(name: str, arguments: dict[str, Any]) -> None:
    text = call_format("harmony").format_call(name, arguments)
    result = parse(text, "harmony")
    assert (result.content, result.errors) == ("", ())
    [parsed] = result.tool_calls
    assert (parsed.name, json.dumps(parsed.arguments)) == (name, json.dumps(arguments))


def test_harmony_instructions_mention_the_markers() -> None:
    fmt = call_format("harmony")
    assert "<|channel|>" in fmt.call_noun
    assert "to=functions.NAME" in fmt.call_instructions
    assert "<|call|>" in fmt.call_instructions
