"""`qwen3_xml`: Qwen3-Coder's XML calls, from the documented format (docs/dialects.md), read whole, one
character at a time and in random chunks with identical results."""

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


def call(name: str, **parameters: str) -> str:
    """A call as the Qwen3-Coder template writes it: each tag on its own line."""
    lines = ["<tool_call>", f"<function={name}>"]
    for key, value in parameters.items():
        lines += [f"<parameter={key}>", value, "</parameter>"]
    return "\n".join([*lines, "</function>", "</tool_call>"])


WEATHER = call("get_weather", city="Paris", days="3")
UNOPENED = WEATHER.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
CASES = [
    Case("single", WEATHER, calls=[("get_weather", {"city": "Paris", "days": 3})]),
    Case(
        "parallel",
        WEATHER + "\n" + call("get_weather", city="Oslo") + "<|im_end|>",
        calls=[("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {"city": "Oslo"})],
        content="\n",
    ),
    Case(
        "no_call",
        "Use <function=f> or <parameter> tags, 1 < 2, <tool_cal and </function>.<|im_end|>",
        "Use <function=f> or <parameter> tags, 1 < 2, <tool_cal and </function>.",
    ),
    Case(
        "text_before_and_after",
        "Let me check.\n\n" + WEATHER + "\n\nDone.<|im_end|><|endoftext|>",
        "Let me check.\n\n\n\nDone.",
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
            force="True",
            limit="None",
            mode="fast",
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
                    "mode": "fast",
                },
            )
        ],
    ),
    Case(
        "string_or_null_values",
        call("write", note="null", mode="5") + call("write", note="null or not", limit="null"),
        calls=[("write", {"note": None, "mode": 5}), ("write", {"note": "null or not", "limit": None})],
    ),
    Case(
        "untyped_without_a_schema",
        call("unknown_tool", n="3", flag="true", obj='{"a": 1}', text=" spaced "),
        calls=[("unknown_tool", {"n": "3", "flag": "true", "obj": {"a": 1}, "text": " spaced "})],
    ),
    Case(
        "empty_arguments",
        "<tool_call>\n<function=now>\n</function>\n</tool_call><tool_call><function=later></function></tool_call>",
        calls=[("now", {}), ("later", {})],
    ),
    Case(
        "markers_inside_a_string_argument",
        call(
            "write", code='if a </parameter> b:\n    s = "<tool_call></tool_call></function>"\n</parameter>x'
        )
        + "ok",
        "ok",
        [
            (
                "write",
                {"code": 'if a </parameter> b:\n    s = "<tool_call></tool_call></function>"\n</parameter>x'},
            )
        ],
    ),
    Case(
        "reasoning_then_call",
        "<think>\nThe user wants the weather.\n</think>\n\n" + WEATHER,
        calls=[("get_weather", {"city": "Paris", "days": 3})],
        reasoning="\nThe user wants the weather.\n",
        content="\n\n",
    ),
    Case(
        "reasoning_opened_by_the_prompt",
        "The user wants the weather.\n</think>\n\nChecking.\n" + WEATHER,
        "\n\nChecking.\n",
        [("get_weather", {"city": "Paris", "days": 3})],
        reasoning="The user wants the weather.\n",
        reasoning_open=True,
    ),
    Case(
        "presumed_open_but_the_model_called_at_once",  # Qwen3.5 told to think, in non-thinking mode
        "Checking.\n" + WEATHER,
        "Checking.\n",
        [("get_weather", {"city": "Paris", "days": 3})],
        reasoning_open=True,
    ),
    Case(
        "presumed_open_and_the_call_left_reasoning_unclosed",
        "<think>\nThe user wants the weather.\n" + WEATHER,
        "",
        [("get_weather", {"city": "Paris", "days": 3})],
        reasoning="\nThe user wants the weather.\n",
        reasoning_open=True,
    ),
    Case("presumed_open_but_only_an_answer", "It is sunny.\n", "It is sunny.\n", reasoning_open=True),
    Case(
        "truncated_in_a_value",
        "Checking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",
        "Checking.\n",
        errors=1,
        truncated=True,
    ),
    Case(
        "truncated_after_the_function",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n",
        errors=1,
        truncated=True,
    ),
    Case(
        "malformed_then_text_and_a_call",
        "a <tool_call>\n<function=f>\nnot a parameter\n</function>\n</tool_call> after " + WEATHER,
        "a  after ",
        [("get_weather", {"city": "Paris", "days": 3})],
        errors=1,
    ),
    Case(
        "value_never_closed_swallows_nothing",
        '<tool_call>\n<function=f>\n<parameter=a>\nx\n</tool_call>\nafter <tool_call>{"name": "g"}</tool_call>',
        "\nafter ",
        [("g", {})],
        errors=1,
        formats=["hermes"],
    ),
    Case(
        "function_tag_not_closed",
        "<tool_call><function=get weather\n</tool_call>after",
        "after",
        errors=1,
    ),
    Case(
        "parameter_close_left_out",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n<parameter=days>\n3\n</function>\n</tool_call>",
        calls=[("get_weather", {"city": "Paris", "days": 3})],
    ),
    Case(
        "function_close_left_out",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</tool_call>",
        calls=[("get_weather", {"city": "Paris"})],
    ),
    Case(
        "tool_call_close_left_out",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\nDone.",
        "Done.",
        [("get_weather", {"city": "Paris"})],
    ),
    Case(
        "two_functions_in_one_block",
        "<tool_call>\n<function=a>\n</function>\n<function=b>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>",
        calls=[("a", {}), ("b", {"x": "1"})],
    ),
    Case(
        "opener_left_out",  # Qwen3-Coder / Qwen3.5: `<function=` with no `<tool_call>` before it
        "Let me check.\n" + UNOPENED + "\n</tool_call>\nDone.<|im_end|>",
        "Let me check.\n\nDone.",
        [("get_weather", {"city": "Paris", "days": 3})],
    ),
    Case(
        "opener_and_closer_left_out_parallel",
        UNOPENED + "\n" + UNOPENED.replace("Paris", "Oslo") + "\n",
        calls=[("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {"city": "Oslo", "days": 3})],
    ),
    Case(
        "opener_left_out_after_reasoning",
        "<think>\nThe user wants the weather.\n</think>\n\n" + UNOPENED + "<|im_end|>",
        "\n\n",
        [("get_weather", {"city": "Paris", "days": 3})],
        reasoning="\nThe user wants the weather.\n",
    ),
    Case(
        "output_ends_after_the_last_value",  # `</function>` and `</tool_call>` left out too
        "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n",
        calls=[("get_weather", {"city": "Paris"})],
    ),
    Case(
        "output_ends_after_the_last_value_of_an_opened_call",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>",
        calls=[("get_weather", {"city": "Oslo"})],
    ),
    Case(
        "function_tags_in_prose_stay_text",
        "Write <function=NAME> then <parameter=KEY>: <function=f> is a tag, <function=a b\nand <function=g>",
        "Write <function=NAME> then <parameter=KEY>: <function=f> is a tag, <function=a b\nand <function=g>",
    ),
    Case(
        "opener_left_out_truncated_in_a_value",
        "Checking.\n<function=get_weather>\n<parameter=city>\nPar",
        "Checking.\n",
        errors=1,
        truncated=True,
    ),
    Case(
        "opener_left_out_truncated_after_the_function",  # the call is whole: nothing was cut from it
        UNOPENED + "\n",
        calls=[("get_weather", {"city": "Paris", "days": 3})],
        truncated=True,
    ),
    Case(
        "opener_left_out_malformed_then_text",
        "<function=f>\n<parameter=a b\nx\n</parameter>\n</function>\nafter " + UNOPENED,
        "\nafter ",
        [("get_weather", {"city": "Paris", "days": 3})],
        errors=1,
    ),
    Case(
        "a_json_body_is_read_as_hermes",
        'Sure.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>',
        "Sure.\n",
        [("get_weather", {"city": "Rome"})],
        formats=["hermes"],
    ),
    Case(
        "values_keep_their_own_newlines",
        "<tool_call>\n<function=write>\n<parameter=code>\n\nline\n\n</parameter>\n"
        "<parameter=path>a</parameter></function></tool_call>",
        calls=[("write", {"code": "\nline\n", "path": "a"})],
    ),
]
IDS = [case.id for case in CASES]


@pytest.mark.parametrize("fmt", ["qwen3_xml", "auto"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_qwen3_xml_whole_output(case: Case, fmt: str) -> None:
    check(parse_case(case, fmt), case, "qwen3_xml")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_qwen3_xml_one_character_at_a_time(case: Case) -> None:
    check_one_character_at_a_time(case, "qwen3_xml")


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("case", CASES, ids=IDS)
@given(data=st.data())
def test_qwen3_xml_random_chunks_agree_with_whole(case: Case, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(case.text)), max_size=max(1, len(case.text) // 3)))
    check_chunks(case, cuts, "qwen3_xml")


def test_the_other_tool_call_formats_read_it_too() -> None:
    for fmt in ("hermes", "glm"):
        check(parse_case(CASES[0], fmt), CASES[0], "qwen3_xml")


def test_start_comes_with_the_name_arguments_with_each_value_end_with_the_closing_tag() -> None:
    parser = StreamParser("qwen3_xml", schemas=SCHEMAS)
    assert parser.feed("<tool_call>\n<function=get_wea") == []
    assert parser.feed("ther>\n<parameter=city>\nPar") == [ToolCallStart("get_weather")]
    assert parser.feed("is\n</parameter>\n<parameter=days>\n3\n</param") == [
        ToolCallArgumentsDelta('{"city": "Paris"')
    ]
    assert parser.feed("eter>\n</function>\n</tool_") == [ToolCallArgumentsDelta(', "days": 3')]
    events = parser.feed("call>")
    assert events[0] == ToolCallArgumentsDelta("}")
    assert isinstance(events[-1], ToolCallEnd)
    assert events[-1].call.arguments == {"city": "Paris", "days": 3}


def test_qwen3_xml_call_ends_on_the_feed_that_completes_it() -> None:
    assert_end_on_the_completing_feed("Let me check. " + WEATHER, "qwen3_xml")
    assert_end_on_the_completing_feed(WEATHER + WEATHER, "qwen3_xml")


def test_a_cut_off_call_is_an_error_with_its_text() -> None:
    text = "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar"
    result = parse(text, "qwen3_xml", truncated=True)
    assert result.tool_calls == ()
    [error] = result.errors
    assert error.raw == text
    assert "cut off" in error.message


def test_a_function_without_a_name_is_an_error_with_its_text() -> None:
    text = "<tool_call>\n<function=>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>"
    result = parse(text + "after", "qwen3_xml")
    assert (result.content, result.tool_calls) == ("after", ())
    [error] = result.errors
    assert error.raw == text.replace("<tool_call>\n", "<tool_call>")
    assert "no tool name" in error.message


def test_a_value_that_is_unfit_is_an_error() -> None:
    text = call("write", data="[" * 200 + "]" * 200)  # nested too deeply to use
    result = parse(text, "qwen3_xml", schemas={"write": {"properties": {"data": {"type": "array"}}}})
    assert result.tool_calls == ()
    assert len(result.errors) == 1


@settings(max_examples=100, deadline=None)
@given(name=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,15}", fullmatch=True), arguments=round_trip_arguments)
def test_qwen3_xml_round_trip_with_the_tool_schema(name: str, arguments: dict[str, Any]) -> None:
    text = call_format("qwen3_xml").format_call(name, arguments)
    result = parse(text, "qwen3_xml", schemas={name: schema_for(arguments)})
    assert (result.content, result.errors) == ("", ())
    [parsed] = result.tool_calls
    assert (parsed.name, json.dumps(parsed.arguments)) == (name, json.dumps(arguments))


def test_format_call_writes_the_template_form() -> None:
    written = call_format("qwen3_xml").format_call(
        "get_weather", {"city": "Paris", "days": 3, "opts": {"a": [1]}}
    )
    assert written == (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
        '</parameter>\n<parameter=opts>\n{"a": [1]}\n</parameter>\n</function>\n</tool_call>'
    )
