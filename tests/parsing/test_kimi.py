"""`kimi`: Kimi K2.x's special-token calls, from the documented format (docs/dialects.md) and the forms
vLLM's and SGLang's kimi_k2 parsers read, whole, one character at a time and in random chunks with
identical results."""

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

SECTION_OPEN = "<|tool_calls_section_begin|>"
SECTION_CLOSE = "<|tool_calls_section_end|>"
CLOSE = "<|tool_call_end|>"


def call(header: str, arguments: str) -> str:
    return f"<|tool_call_begin|>{header}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>"


def section(*calls: str) -> str:
    return SECTION_OPEN + "".join(calls) + SECTION_CLOSE


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    content: str = ""
    calls: list[tuple[str, dict[str, Any], str | None]] = field(default_factory=list)
    errors: int = 0
    reasoning: str = ""
    schemas: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The offered tools' schemas, when the case needs them (a header that is only a counter)."""
    xfail: str = ""
    """Why today's parser reads this form wrong (an issue item that will fix it), if it does."""


def cases(table: list[Case]) -> list[Any]:
    return [
        pytest.param(
            case, id=case.id, marks=[pytest.mark.xfail(strict=True, reason=case.xfail)] * bool(case.xfail)
        )
        for case in table
    ]


WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}}
READ_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
FLIGHT_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}}

CASES = [
    Case(
        "single",
        section(call("functions.get_weather:0", '{"city": "Paris"}')),
        calls=[("get_weather", {"city": "Paris"}, "functions.get_weather:0")],
    ),
    Case(
        "parallel",
        section(
            call("functions.get_weather:0", '{"city": "Paris"}'),
            call("functions.get_time:1", '{"zone": "CET"}'),
        ),
        calls=[
            ("get_weather", {"city": "Paris"}, "functions.get_weather:0"),
            ("get_time", {"zone": "CET"}, "functions.get_time:1"),
        ],
    ),
    Case(
        "no_call",
        "Paris is sunny today. 1 < 2 and <|other|> stay.<|im_end|>",
        "Paris is sunny today. 1 < 2 and <|other|> stay.",
    ),
    Case(
        "text_before_and_after",
        "Let me check." + section(call("functions.get_weather:3", '{"city": "Oslo"}')) + "Done.<|im_end|>",
        "Let me check.Done.",
        [("get_weather", {"city": "Oslo"}, "functions.get_weather:3")],
    ),
    Case(
        "nested_unicode_escaped",
        section(
            call(
                "functions.write:0",
                '{"path": "/tmp/é.txt", "data": {"l": [1, 2.5, null, true], '
                '"s": "line\\nquote\\" brace} \\u00e9 日本"}}',
            )
        ),
        calls=[
            (
                "write",
                {
                    "path": "/tmp/é.txt",
                    "data": {"l": [1, 2.5, None, True], "s": 'line\nquote" brace} é 日本'},
                },
                "functions.write:0",
            )
        ],
    ),
    Case(
        "empty_arguments",
        section(call("functions.now:0", "{}"), call("functions.later:1", "")),
        calls=[("now", {}, "functions.now:0"), ("later", {}, "functions.later:1")],
    ),
    Case(
        "marker_inside_a_string",
        section(call("functions.echo:0", '{"text": "<|tool_call_end|><|tool_calls_section_end|>x"}')) + "ok",
        "ok",
        [("echo", {"text": "<|tool_call_end|><|tool_calls_section_end|>x"}, "functions.echo:0")],
    ),
    Case(
        "singular_section_markers_and_no_functions_prefix",
        "<|tool_call_section_begin|>" + call("search:2", '{"q": "k"}') + "<|tool_call_section_end|>",
        calls=[("search", {"q": "k"}, "search:2")],
    ),
    Case(
        "dotted_name_and_no_index",
        section(call("functions.fs.read", '{"p": 1}')),
        calls=[("fs.read", {"p": 1}, None)],
    ),
    Case(
        "malformed_then_text_and_a_call",
        "a" + section(call("functions.f:0", "not json"), call("functions.g:1", '{"x": 1}')) + "after",
        "aafter",
        [("g", {"x": 1}, "functions.g:1")],
        errors=1,
    ),
    Case(
        "arguments_cut_by_the_call_end",
        "a" + section(call("functions.f:0", '{"a": [1, 2'), call("functions.g:1", '{"x": "y')) + "after",
        "aafter",
        errors=2,
    ),
    Case(
        "no_arguments_marker",
        "a<|tool_call_begin|>functions.f:0<|tool_call_end|>after",
        "aafter",
        errors=1,
    ),
    Case(
        "truncated_mid_call",
        "Checking." + SECTION_OPEN + '<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": [1, ',
        "Checking.",
        errors=1,
    ),
    Case(
        "stray_end_markers_dropped",
        "x<|tool_call_end|>y<|tool_calls_section_end|>z<|tool_call_argument_begin|><|im_end|>",
        "xyz",
    ),
    Case(
        "reasoning_then_call",
        "<think>Need weather.</think>" + section(call("functions.get_weather:0", '{"city": "Rome"}')),
        calls=[("get_weather", {"city": "Rome"}, "functions.get_weather:0")],
        reasoning="Need weather.",
    ),
    Case(
        "spaced_header_newlines_between_calls",
        "Let me check.\n"
        + SECTION_OPEN
        + "\n<|tool_call_begin|> functions.get_weather:0 <|tool_call_argument_begin|> "
        + '{\n  "city": "Paris"\n} <|tool_call_end|>\n'
        + call("functions.get_time:1", '{"zone": "CET"}')
        + "\n"
        + SECTION_CLOSE
        + "<|im_end|>",
        "Let me check.\n",  # the newlines inside the section are its layout, not content
        [
            ("get_weather", {"city": "Paris"}, "functions.get_weather:0"),
            ("get_time", {"zone": "CET"}, "functions.get_time:1"),
        ],
    ),
    Case(
        "text_around_a_section_kept_exactly",
        "A "
        + section(call("functions.f:0", "{}") + "\n" + CLOSE + "\n" + call("functions.g:1", "{}"))
        + "\n\nB",
        "A \n\nB",
        [("f", {}, "functions.f:0"), ("g", {}, "functions.g:1")],
    ),
    Case(
        "section_left_open_then_text",  # the text ends the section; the newline before it was its layout
        SECTION_OPEN + call("functions.f:0", "{}") + "\nDone.",
        "Done.",
        [("f", {}, "functions.f:0")],
    ),
    Case(
        "counter_only_header_one_tool_offered",
        "Let me check. " + section(call("0 ", '{"city": "Tokyo"}')),
        "Let me check. ",
        [("get_weather", {"city": "Tokyo"}, "functions.get_weather:0")],
        schemas={"get_weather": WEATHER_SCHEMA},
    ),
    Case(
        "counter_only_header_the_tool_its_arguments_fit",
        section(call("2", '{"city": "Tokyo", "unit": "celsius"}'), call("3", '{"path": "/tmp/a"}')),
        calls=[
            ("get_weather", {"city": "Tokyo", "unit": "celsius"}, "functions.get_weather:2"),
            ("read_file", {"path": "/tmp/a"}, "functions.read_file:3"),
        ],
        schemas={"read_file": READ_SCHEMA, "get_weather": WEATHER_SCHEMA},
    ),
    Case(
        "counter_only_header_fitting_two_tools_is_reported",
        section(call("0", '{"city": "Tokyo"}')) + "ok",
        "ok",
        errors=1,
        schemas={"get_weather": WEATHER_SCHEMA, "book_flight": FLIGHT_SCHEMA},
    ),
    Case(
        "counter_only_header_tools_unknown_is_reported",
        section(call("functions.0", '{"city": "Tokyo"}')),
        errors=1,
    ),
    Case(
        # K2-Thinking, K2.5: a tool-call section ends the reasoning the model opened (vLLM's kimi_k2
        # reasoning parser), `</think>` or not.
        "reasoning_ended_by_the_call_section",
        "<think>Need weather." + section(call("functions.get_weather:0", '{"city": "Rome"}')),
        calls=[("get_weather", {"city": "Rome"}, "functions.get_weather:0")],
        reasoning="Need weather.",
    ),
]


def check(result: ParseResult, case: Case) -> None:
    __tracebackhide__ = True
    assert result.content == case.content
    assert result.reasoning == case.reasoning
    assert [(c.name, c.arguments, c.id) for c in result.tool_calls] == case.calls
    assert all(c.format == "kimi" for c in result.tool_calls)
    assert len(result.errors) == case.errors, result.errors


def stream(
    text: str, cuts: Sequence[int], fmt: str = "kimi", schemas: dict[str, dict[str, Any]] | None = None
) -> list[Event]:
    parser = StreamParser(fmt, schemas=schemas)
    bounds = [0, *sorted(set(cuts)), len(text)]
    events: list[Event] = []
    for start, end in itertools.pairwise(bounds):
        events += parser.feed(text[start:end])
    return events + parser.finish()


@pytest.mark.parametrize("fmt", ["kimi", "auto"])
@pytest.mark.parametrize("case", cases(CASES))
def test_kimi_whole_output(case: Case, fmt: str) -> None:
    check(parse(case.text, fmt, schemas=case.schemas), case)


@pytest.mark.parametrize("case", cases(CASES))
def test_kimi_one_character_at_a_time(case: Case) -> None:
    events = stream(case.text, range(len(case.text)), schemas=case.schemas)
    check(ParseResult.from_events(events), case)
    assert ParseResult.from_events(events) == ParseResult.from_events(
        stream(case.text, [], schemas=case.schemas)
    )


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
@given(data=st.data())
def test_kimi_random_chunks_agree_with_whole(case: Case, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(case.text)), max_size=max(1, len(case.text) // 3)))
    whole = parse(case.text, "kimi", schemas=case.schemas)
    assert ParseResult.from_events(stream(case.text, cuts, schemas=case.schemas)) == whole


def test_kimi_call_ends_on_the_feed_that_completes_it() -> None:
    parser = StreamParser("kimi")
    early = parser.feed(
        SECTION_OPEN + "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_"
    )
    assert "ToolCallEnd" not in [type(e).__name__ for e in early]
    events = parser.feed("end|>")
    assert [type(e).__name__ for e in events][-1] == "ToolCallEnd"


def test_kimi_arguments_stream_before_the_end() -> None:
    parser = StreamParser("kimi")
    events = parser.feed('<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": "x')
    names = [type(e).__name__ for e in events]
    assert names[0] == "ToolCallStart"
    assert "ToolCallArgumentsDelta" in names


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
def test_kimi_round_trip(name: str, arguments: dict[str, Any]) -> None:
    text = call_format("kimi").format_call(name, arguments)
    result = parse(text, "kimi")
    assert result.content == ""
    assert not result.errors
    [parsed] = result.tool_calls
    assert (parsed.name, json.dumps(parsed.arguments), parsed.id) == (
        name,
        json.dumps(arguments),
        f"functions.{name}:0",
    )


def test_kimi_instructions_mention_the_markers() -> None:
    fmt = call_format("kimi")
    assert "<|tool_call_begin|>" in fmt.call_noun
    assert "<|tool_call_argument_begin|>" in fmt.call_instructions


# Kimi K3 ("XTML") channel markup: the `think` channel is prompt-opened, calls sit in a `tools` channel.
def k3_call(tool: str, index: int | None, *arguments: tuple[str, str | None, str]) -> str:
    index_attribute = f' index="{index}"' if index is not None else ""
    elements = "".join(
        f'<|open|>argument key="{key}"{f" type={chr(34)}{kind}{chr(34)}" if kind else ""}<|sep|>'
        f"{value}<|close|>argument<|sep|>\n"
        for key, kind, value in arguments
    )
    return f'<|open|>call tool="{tool}"{index_attribute}<|sep|>\n{elements}<|close|>call<|sep|>\n'


def tools(*calls: str) -> str:
    return "<|open|>tools<|sep|>\n" + "".join(calls) + "<|close|>tools<|sep|>"


def response(text: str) -> str:
    return f"<|open|>response<|sep|>{text}<|close|>response<|sep|>\n"


WEATHER_K3 = k3_call("get_weather", 1, ("city", "string", "Paris"), ("days", "integer", "3"))

K3_CASES = [
    Case(
        "k3_single",
        tools(WEATHER_K3),
        calls=[("get_weather", {"city": "Paris", "days": 3}, "functions.get_weather:1")],
    ),
    Case(
        "k3_parallel",
        tools(WEATHER_K3, k3_call("get_time", 2, ("tz", "string", "CET"))),
        calls=[
            ("get_weather", {"city": "Paris", "days": 3}, "functions.get_weather:1"),
            ("get_time", {"tz": "CET"}, "functions.get_time:2"),
        ],
    ),
    Case(
        "k3_no_call",
        response("It is sunny. 1 < 2 and <|other|> stay.") + "<|im_end|>",
        "It is sunny. 1 < 2 and <|other|> stay.\n",
    ),
    Case(
        "k3_text_before_and_after",
        response("Checking.") + tools(k3_call("f", 0)) + "\n" + response("Done."),
        "Checking.\n\nDone.\n",
        [("f", {}, "functions.f:0")],
    ),
    Case(
        "k3_nested_unicode_escaped",
        tools(
            k3_call(
                "write",
                3,
                ("path", "string", "/tmp/é 日本.txt\n  keep  "),
                ("data", "object", '{"l": [1, 2.5, null, true], "s": "q\\" }"}'),
                ("flag", "boolean", "true"),
                ("note", None, "plain"),
                ("a&quot;b&amp;c", "string", "x"),
            )
        ),
        calls=[
            (
                "write",
                {
                    "path": "/tmp/é 日本.txt\n  keep  ",
                    "data": {"l": [1, 2.5, None, True], "s": 'q" }'},
                    "flag": True,
                    "note": "plain",
                    'a"b&c': "x",
                },
                "functions.write:3",
            )
        ],
    ),
    Case(
        "k3_marker_inside_a_value",
        tools(k3_call("echo", 1, ("text", "string", "<tool_call> <|tool_call_end|> <|open|x </think>"))),
        calls=[("echo", {"text": "<tool_call> <|tool_call_end|> <|open|x </think>"}, "functions.echo:1")],
    ),
    Case(
        "k3_prompt_opened_reasoning_then_call",
        "Need the weather.<|close|>think<|sep|>\n" + tools(WEATHER_K3),
        calls=[("get_weather", {"city": "Paris", "days": 3}, "functions.get_weather:1")],
        reasoning="Need the weather.",
        content="\n",
    ),
    Case(
        "k3_reasoning_opened_by_the_model",
        "<|open|>think<|sep|>Hmm.<|close|>think<|sep|>" + response("Hi."),
        "Hi.\n",
        reasoning="Hmm.",
    ),
    Case(
        "k3_no_index_no_id",
        tools(k3_call("f", None, ("n", "number", "2.5"))),
        calls=[("f", {"n": 2.5}, None)],
    ),
    Case(
        "k3_malformed_then_text_and_a_call",
        tools('<|open|>call tool="f" index="1"<|sep|>oops', k3_call("g", 2, ("x", "integer", "1"))) + "after",
        "oops\nafter",
        [("g", {"x": 1}, "functions.g:2")],
        errors=1,
    ),
    Case(
        "k3_unknown_element",
        tools('<|open|>call tool="f"<|sep|><|open|>what<|sep|>x<|close|>call<|sep|>') + "after",
        "xafter",
        errors=1,
    ),
    Case(
        "k3_truncated_mid_call",
        response("Checking.") + '<|open|>tools<|sep|>\n<|open|>call tool="f" index="1"<|sep|>\n'
        '<|open|>argument key="a" type="string"<|sep|>Par',
        "Checking.\n",
        errors=1,
    ),
    Case("k3_ends_with_a_marker_that_could_have_grown", "Hi<|close|>", "Hi"),
    Case(
        "k3_stray_tags_dropped",
        "x<|close|>tools<|sep|>y<|open|>message<|sep|>z<|close|>message<|sep|><|open|>other<|sep|>w<|close|>other<|sep|>",
        "xyzw",
    ),
]


@pytest.mark.parametrize("fmt", ["kimi", "auto"])
@pytest.mark.parametrize("case", K3_CASES, ids=[case.id for case in K3_CASES])
def test_k3_whole_output(case: Case, fmt: str) -> None:
    check(parse(case.text, fmt), case)


@pytest.mark.parametrize("case", K3_CASES, ids=[case.id for case in K3_CASES])
def test_k3_one_character_at_a_time_and_prompt_opened(case: Case) -> None:
    opened = case.text.find("<|close|>think<|sep|>") >= 0 and not case.text.startswith("<|open|>think")
    parser = StreamParser("kimi", reasoning_open=opened)
    events = [event for char in case.text for event in parser.feed(char)] + parser.finish()
    check(ParseResult.from_events(events), case)
    assert ParseResult.from_events(events) == parse(case.text, "kimi", reasoning_open=opened)
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta):
            assert not any(tag in event.text for tag in ("<|open|>", "<|close|>", "<|sep|>"))


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("case", K3_CASES, ids=[case.id for case in K3_CASES])
@given(data=st.data())
def test_k3_random_chunks_agree_with_whole(case: Case, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(case.text)), max_size=max(1, len(case.text) // 3)))
    assert ParseResult.from_events(stream(case.text, cuts)) == parse(case.text, "kimi", reasoning_open=False)


def test_k3_value_nested_past_the_stack_stays_text() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    result = parse(tools(k3_call("f", 1, ("x", "array", deep))), "kimi")
    assert [call.arguments for call in result.tool_calls] == [{"x": deep}]


def test_k3_truncated_call_is_no_call() -> None:
    result = parse(tools(WEATHER_K3).removesuffix("<|close|>tools<|sep|>")[:-12], "kimi", truncated=True)
    assert (result.tool_calls, len(result.errors)) == ((), 1)


def test_k3_call_ends_on_the_feed_that_completes_it() -> None:
    parser = StreamParser("kimi")
    text = tools(WEATHER_K3)
    cut = text.index("<|close|>call<|sep|>") + len("<|close|>call<|se")
    early = parser.feed(text[:cut])
    assert [type(e) for e in early] == [ToolCallStart]  # the "\n" after <|open|>tools<|sep|> is layout
    assert [type(e) for e in parser.feed("p|>")] == [ToolCallArgumentsDelta, ToolCallEnd]
