"""Table-driven: every format and edge case of the corpus, parsed whole and streamed one character at a time."""

from __future__ import annotations

import pytest
from family_checks import Case
from parsing_cases import CASES

from toolbridge.errors import UsageError
from toolbridge.parsing import (
    Event,
    ParsedToolCall,
    ParseResult,
    ReasoningDelta,
    StreamParser,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    available_formats,
    parse,
)
from toolbridge.parsing._stream import HOLD_LIMIT
from toolbridge.types import ToolCall


def check(result: ParseResult, case: Case) -> None:
    assert result.content == case.content
    assert result.reasoning == case.reasoning
    assert [(call.name, call.arguments) for call in result.tool_calls] == case.calls
    assert len(result.errors) == case.errors, result.errors
    if case.ids is not None:
        assert [call.id for call in result.tool_calls] == case.ids
    if case.sources is not None:
        assert [call.source for call in result.tool_calls] == case.sources


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_parse_whole_output(case: Case) -> None:
    check(parse(case.text, case.format, reasoning_open=case.reasoning_open), case)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_stream_one_character_at_a_time(case: Case) -> None:
    parser = StreamParser(case.format, reasoning_open=bool(case.reasoning_open))
    events = [event for char in case.text for event in parser.feed(char)] + parser.finish()
    check(ParseResult.from_events(events), case)


def test_a_lone_close_think_is_detected_by_parse_when_not_told() -> None:
    result = parse('Thinking...</think>Answer.<tool_call>{"name": "f", "arguments": {}}</tool_call>')
    assert (result.reasoning, result.content, len(result.tool_calls)) == ("Thinking...", "Answer.", 1)


def test_a_close_think_after_a_call_does_not_make_the_start_reasoning() -> None:
    result = parse('Hi<tool_call>{"name": "f", "arguments": {"s": "</think>"}}</tool_call>')
    assert (result.reasoning, result.content) == ("", "Hi")


def test_a_stream_told_nothing_drops_a_lone_close_think() -> None:
    parser = StreamParser()
    events = parser.feed("plan</think>answer") + parser.finish()
    assert ParseResult.from_events(events).content == "plananswer"


def feed_each(parser: StreamParser, *deltas: str) -> list[list[Event]]:
    return [parser.feed(delta) for delta in deltas] + [parser.finish()]


def test_a_presumed_open_reasoning_is_held_until_a_close_shows_it_was_reasoning() -> None:
    parser = StreamParser(reasoning_open=True)
    assert feed_each(parser, "The user ", "wants it.\n</think>", "\n\nSure.") == [
        [],
        [ReasoningDelta("The user wants it.\n")],
        [TextDelta("\n\nSure.")],
        [],
    ]


def test_a_call_marker_shows_a_presumed_open_reasoning_was_content_and_the_call_is_read() -> None:
    parser = StreamParser(reasoning_open=True)
    call = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    events = feed_each(parser, "Let me check. ", call, " Done.")
    assert events[0] == []
    assert events[1][0] == TextDelta("Let me check. ")
    assert isinstance(events[1][1], ToolCallStart)
    assert events[2:] == [[TextDelta(" Done.")], []]


def test_an_explicit_opener_decides_reasoning_and_the_end_of_output_decides_content() -> None:
    repeated = StreamParser(reasoning_open=True)
    assert feed_each(repeated, "\n<think>hm", "</think>ok") == [
        [ReasoningDelta("\n"), ReasoningDelta("hm")],
        [TextDelta("ok")],
        [],
    ]
    undecided = StreamParser(reasoning_open=True)
    assert feed_each(undecided, "It is ", "sunny.") == [[], [], [TextDelta("It is sunny.")]]


def test_a_presumed_open_reasoning_streams_as_reasoning_past_the_hold_limit() -> None:
    parser = StreamParser(reasoning_open=True)
    long = "x" * HOLD_LIMIT
    assert parser.feed(long) == []
    assert parser.feed("yz") == [ReasoningDelta(long + "yz")]
    assert parser.feed("more") == [ReasoningDelta("more")]
    assert parse(long + "yz</think>ok", reasoning_open=True).reasoning == long + "yz"
    assert parse(long + "yz", reasoning_open=True).content == long + "yz"  # parse() needs no limit


def test_without_the_hint_content_streams_at_once() -> None:
    parser = StreamParser()
    assert feed_each(parser, "Hi", " ", "there") == [
        [TextDelta("Hi")],
        [TextDelta(" ")],
        [TextDelta("there")],
        [],
    ]


TEXT_AROUND_CALLS = (
    "  Let me check.\n\n"
    '<tool_call>{"name": "f", "arguments": {}}</tool_call>\n'
    "  <think> weigh it \n</think>\n"
    "Then this:  \t"
    "```tool\nname: g\n```"
    "\n\nDone. \n"
)


@pytest.mark.parametrize("cuts", ["whole", "one character at a time"])
def test_text_is_kept_exactly_around_calls_and_reasoning(cuts: str) -> None:
    parser = StreamParser()
    deltas = [TEXT_AROUND_CALLS] if cuts == "whole" else list(TEXT_AROUND_CALLS)
    result = ParseResult.from_events([e for delta in deltas for e in parser.feed(delta)] + parser.finish())
    assert result.content == "  Let me check.\n\n\n  \nThen this:  \t\n\nDone. \n"
    assert result.reasoning == " weigh it \n"
    assert [call.name for call in result.tool_calls] == ["f", "g"]


def test_every_call_start_comes_before_its_arguments_and_end() -> None:
    parser = StreamParser()
    events = parser.feed('<tool_call>{"arguments": {"a": 1}, "name": "late"}</tool_call>')
    kinds = [type(event) for event in events]
    assert kinds == [ToolCallStart, ToolCallArgumentsDelta, ToolCallEnd]
    assert events[0] == ToolCallStart("late")
    assert events[1] == ToolCallArgumentsDelta('{"a": 1}')


def test_parse_errors_carry_the_raw_call_and_say_what_to_do() -> None:
    (error,) = parse("<tool_call>get_weather(city=Paris)</tool_call>").errors
    assert error.raw == "<tool_call>get_weather(city=Paris)</tool_call>"
    assert "JSON object" in error.message
    assert '{"name": ..., "arguments": {...}}' in error.message
    (error,) = parse('```tool\n参数: {"a": 1}\n```').errors
    assert error.raw == '```tool\n参数: {"a": 1}\n```'
    assert "工具名称" in error.message


def test_no_id_is_invented_by_the_parser_but_to_tool_call_makes_one() -> None:
    (call,) = parse('<tool_call>{"name": "f", "arguments": {"a": 1}, "source": "srv"}</tool_call>').tool_calls
    assert call == ParsedToolCall("f", {"a": 1}, None, "srv", "hermes")
    converted = call.to_tool_call()
    assert isinstance(converted, ToolCall)
    assert (converted.name, converted.arguments, converted.source) == ("f", {"a": 1}, "srv")
    assert converted.id.startswith("call_")
    assert ParsedToolCall("f", {}, id="call_9").to_tool_call().id == "call_9"


def test_formats_are_listed_and_unknown_ones_refused() -> None:
    # `auto` first, then each format once (families are added in parallel: no fixed full list here)
    assert available_formats()[:3] == ["auto", "hermes", "fenced"]
    assert len(set(available_formats())) == len(available_formats())
    with pytest.raises(UsageError, match="unknown tool-call format 'qwen9'"):
        StreamParser("qwen9")


def test_result_serialises_to_plain_json_data() -> None:
    result = parse('hi<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call><tool_call>x()</tool_call>')
    data = result.to_dict()
    assert data["content"] == "hi"
    assert data["tool_calls"] == [
        {"name": "f", "arguments": {"a": 1}, "id": None, "source": None, "format": "hermes"}
    ]
    assert data["errors"][0]["raw"] == "<tool_call>x()</tool_call>"
