"""`glm`: GLM-4.5 to 5.x calls, from the documented format (docs/dialects.md), read whole, one character
at a time and in random chunks with identical results."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tool_call_tag_harness import (
    SCHEMAS,
    Case,
    assert_end_on_the_completing_feed,
    check,
    check_chunks,
    check_one_character_at_a_time,
    parse_case,
    round_trip_arguments,
    schema_for,
)

from toolbridge.parsing import (
    StreamParser,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    call_format,
    parse,
)


def call(name: str, *, newlines: bool = True, **arguments: str) -> str:
    """A call as GLM-4.5/4.6 write it (a newline after the name and each tag), or GLM-4.7/5 (none)."""
    nl = "\n" if newlines else ""
    pairs = "".join(f"<arg_key>{k}</arg_key>{nl}<arg_value>{v}</arg_value>{nl}" for k, v in arguments.items())
    return f"<tool_call>{name}{nl}{pairs}</tool_call>"


WEATHER = call("get_weather", city="Paris", days="3")
WEATHER_47 = call("get_weather", newlines=False, city="Paris", days="3")
CASES = [
    Case("single", WEATHER, calls=[("get_weather", {"city": "Paris", "days": 3})]),
    Case("single_glm_4_7", WEATHER_47, calls=[("get_weather", {"city": "Paris", "days": 3})]),
    Case(
        "parallel",
        WEATHER + "\n" + call("get_weather", city="Oslo") + WEATHER_47 + "<|observation|>",
        calls=[
            ("get_weather", {"city": "Paris", "days": 3}),
            ("get_weather", {"city": "Oslo"}),
            ("get_weather", {"city": "Paris", "days": 3}),
        ],
        content="\n",
    ),
    Case(
        "no_call",
        "Use <arg_key> and <arg_value> tags, 1 < 2, <tool_cal.<|user|>",
        "Use <arg_key> and <arg_value> tags, 1 < 2, <tool_cal.",
    ),
    Case(
        "text_before_and_after",
        "Let me check.\n" + WEATHER + "\nDone.<|endoftext|>",
        "Let me check.\n\nDone.",
        [("get_weather", {"city": "Paris", "days": 3})],
    ),
    Case(
        "nested_unicode_escaped",
        call(
            "write",
            path="/tmp/é 日本.txt",
            code='def f():\n    return "quote\\" back\\\\slash" < 3\n',
            data='{"l": [1, 2.5, null, true], "s": "line\\nbreak \\u00e9"}',
            tags='["a", "😀"]',
            ratio="0.5",
            force="true",
            limit="null",
            mode="2",
        ),
        calls=[
            (
                "write",
                {
                    "path": "/tmp/é 日本.txt",
                    "code": 'def f():\n    return "quote\\" back\\\\slash" < 3\n',
                    "data": {"l": [1, 2.5, None, True], "s": "line\nbreak é"},
                    "tags": ["a", "😀"],
                    "ratio": 0.5,
                    "force": True,
                    "limit": None,
                    "mode": 2,
                },
            )
        ],
    ),
    Case(
        "string_or_null_values",
        call("write", note="null", mode="5")
        + call("write", newlines=False, note="null or not", limit="null"),
        calls=[("write", {"note": None, "mode": 5}), ("write", {"note": "null or not", "limit": None})],
    ),
    Case(
        "untyped_without_a_schema",
        call("unknown_tool", n="3", obj='{"a": 1}', text="\n spaced \n"),
        calls=[("unknown_tool", {"n": "3", "obj": {"a": 1}, "text": "\n spaced \n"})],
    ),
    Case(
        "empty_arguments",
        "<tool_call>now</tool_call>\n<tool_call>later\n</tool_call>",
        calls=[("now", {}), ("later", {})],
        content="\n",
    ),
    Case(
        "markers_inside_a_string_argument",
        call("write", code='a </arg_value> b <arg_key>k</arg_key> "<tool_call></tool_call>"') + "ok",
        "ok",
        [("write", {"code": 'a </arg_value> b <arg_key>k</arg_key> "<tool_call></tool_call>"'})],
    ),
    Case(
        "reasoning_then_call",
        "<think>The user wants the weather.</think>\n" + WEATHER,
        calls=[("get_weather", {"city": "Paris", "days": 3})],
        reasoning="The user wants the weather.",
        content="\n",
    ),
    Case(
        "reasoning_opened_by_the_prompt",  # GLM-4.7 and 5: the prompt ends in `<|assistant|><think>`
        "The user wants the weather.</think>Checking." + WEATHER_47,
        "Checking.",
        [("get_weather", {"city": "Paris", "days": 3})],
        reasoning="The user wants the weather.",
        reasoning_open=True,
    ),
    Case(
        "presumed_open_but_the_model_called_at_once",
        "Checking." + WEATHER_47,
        "Checking.",
        [("get_weather", {"city": "Paris", "days": 3})],
        reasoning_open=True,
    ),
    Case(
        "truncated_in_a_value",
        "Checking.<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par",
        "Checking.",
        errors=1,
        truncated=True,
    ),
    Case("truncated_after_the_name", "<tool_call>get_weather\n", errors=1, truncated=True),
    Case(
        "malformed_then_text_and_a_call",
        "a <tool_call>f\n<arg_value>no key</arg_value>\n</tool_call> after " + WEATHER,
        "a  after ",
        [("get_weather", {"city": "Paris", "days": 3})],
        errors=1,
    ),
    Case(
        "a_key_without_a_value",
        "<tool_call>f<arg_key>a</arg_key>b</tool_call>after" + WEATHER_47,
        "after",
        [("get_weather", {"city": "Paris", "days": 3})],
        errors=1,
    ),
    Case(
        "value_never_closed_swallows_nothing",
        '<tool_call>f<arg_key>a</arg_key><arg_value>x</tool_call>after<tool_call>{"name": "g"}</tool_call>',
        "after",
        [("g", {})],
        errors=1,
        formats=["hermes"],
    ),
    Case(
        "tool_call_close_left_out_before_the_next_call",
        "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value>\n" + WEATHER_47,
        calls=[("f", {"a": "1"}), ("get_weather", {"city": "Paris", "days": 3})],
    ),
    Case(
        "a_name_that_is_not_one_is_not_a_call",
        "<tool_call>get_weather(city='Paris')</tool_call>then",
        "then",
        errors=1,
    ),
    Case(
        "values_written_as_escaped_json",  # GLM-4.6/4.7: strings in quotes, objects with escaped quotes
        call(
            "write",
            newlines=False,
            path='"/tmp/a b.txt"',
            code='"print(\\"hi\\")\\nx = 1"',
            data='{\\"l\\": [1, 2], \\"s\\": \\"é\\"}',
            tags='"[\\"a\\", \\"b\\"]"',
            ratio='"0.5"',
            force='"true"',
        )
        + call("get_weather", city='"São \\"Paulo\\""', days="3"),
        calls=[
            (
                "write",
                {
                    "path": "/tmp/a b.txt",
                    "code": 'print("hi")\nx = 1',
                    "data": {"l": [1, 2], "s": "é"},
                    "tags": ["a", "b"],
                    "ratio": 0.5,
                    "force": True,
                },
            ),
            ("get_weather", {"city": 'São "Paulo"', "days": 3}),
        ],
    ),
    Case(
        "escapes_without_quotes_around_stay_as_written",
        call("write", code='echo \\"hi\\" > "a b"', path='"a" and "b"', data='{\\"broken'),
        calls=[("write", {"code": 'echo \\"hi\\" > "a b"', "path": '"a" and "b"', "data": '{\\"broken'})],
    ),
    Case(
        "a_quoted_json_object_without_a_schema",
        call("unknown_tool", obj='"{\\"a\\": 1}"', text='"x"', raw='{\\"a\\": [1]}'),
        calls=[("unknown_tool", {"obj": {"a": 1}, "text": "x", "raw": {"a": [1]}})],
    ),
    Case(
        "a_json_body_is_read_as_hermes",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>',
        calls=[("get_weather", {"city": "Rome"})],
        formats=["hermes"],
    ),
]
IDS = [case.id for case in CASES]


@pytest.mark.parametrize("fmt", ["glm", "auto"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_glm_whole_output(case: Case, fmt: str) -> None:
    check(parse_case(case, fmt), case, "glm")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_glm_one_character_at_a_time(case: Case) -> None:
    check_one_character_at_a_time(case, "glm")


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("case", CASES, ids=IDS)
@given(data=st.data())
def test_glm_random_chunks_agree_with_whole(case: Case, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(case.text)), max_size=max(1, len(case.text) // 3)))
    check_chunks(case, cuts, "glm")


def test_the_other_tool_call_formats_read_it_too() -> None:
    for fmt in ("hermes", "qwen3_xml"):
        check(parse_case(CASES[0], fmt), CASES[0], "glm")


def test_start_comes_with_the_name_arguments_with_each_value_end_with_the_closing_tag() -> None:
    parser = StreamParser("glm", schemas=SCHEMAS)
    assert parser.feed("<tool_call>get_wea") == []
    assert parser.feed("ther<arg_key>city</arg_key><arg_value>Par") == [ToolCallStart("get_weather")]
    assert parser.feed("is</arg_value><arg_key>days</arg_key><arg_value>3</arg_val") == [
        ToolCallArgumentsDelta('{"city": "Paris"')
    ]
    assert parser.feed("ue></tool_") == []  # the value ends at </arg_value> only if </tool_call> follows
    events = parser.feed("call>")
    assert events[:2] == [ToolCallArgumentsDelta(', "days": 3'), ToolCallArgumentsDelta("}")]
    assert isinstance(events[-1], ToolCallEnd)
    assert events[-1].call.arguments == {"city": "Paris", "days": 3}


def test_glm_call_ends_on_the_feed_that_completes_it() -> None:
    assert_end_on_the_completing_feed("Let me check. " + WEATHER, "glm")
    assert_end_on_the_completing_feed(WEATHER + WEATHER, "glm")


def test_a_cut_off_call_is_an_error_with_its_text() -> None:
    text = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par"
    result = parse(text, "glm", truncated=True)
    assert result.tool_calls == ()
    [error] = result.errors
    assert error.raw == text


@settings(max_examples=100, deadline=None)
@given(name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True), arguments=round_trip_arguments)
def test_glm_round_trip_with_the_tool_schema(name: str, arguments: dict[str, Any]) -> None:
    text = call_format("glm").format_call(name, arguments)
    result = parse(text, "glm", schemas={name: schema_for(arguments)})
    assert (result.content, result.errors) == ("", ())
    [parsed] = result.tool_calls
    assert (parsed.name, json.dumps(parsed.arguments)) == (name, json.dumps(arguments))


def test_format_call_writes_the_template_form() -> None:
    written = call_format("glm").format_call("get_weather", {"city": "Paris", "days": 3, "opts": {"a": [1]}})
    assert written == (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n"
        '<arg_key>opts</arg_key>\n<arg_value>{"a": [1]}</arg_value>\n</tool_call>'
    )


def test_a_string_in_quotes_is_written_as_json_and_reads_back() -> None:
    arguments = {"path": '"quoted"', "code": '{\\"a\\": 1}', "mode": ' "a \\" b" '}
    written = call_format("glm").format_call("write", arguments)
    assert '<arg_value>"\\"quoted\\""</arg_value>' in written
    assert '<arg_value>{\\"a\\": 1}</arg_value>' in written  # a string parameter: read as written
    assert parse(written, "glm", schemas=SCHEMAS).tool_calls[0].arguments == arguments
