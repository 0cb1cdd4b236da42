"""Building turns: the pieces a turn streams and how it describes itself in failure messages."""

import json

import pytest

import toolbridge.testing
from toolbridge.errors import UsageError
from toolbridge.testing import ToolCallSpec, Turn


def test_public_names_are_exactly_the_testing_kit() -> None:
    assert set(toolbridge.testing.__all__) == {
        "ErrorReply",
        "Expectation",
        "FunctionModel",
        "FunctionReply",
        "RecordedRequest",
        "ReplyFunction",
        "ReplyPiece",
        "ReplyRecord",
        "ScriptedAnthropicServer",
        "ScriptedModelServer",
        "ToolCallSpec",
        "Turn",
        "Usage",
    }


def test_text_is_cut_into_chunks_of_the_given_size_or_sent_in_the_given_pieces() -> None:
    assert Turn.text("Hello", chunk_size=3).segments[0].pieces == ("Hel", "lo")
    assert Turn.text(["Hel", "lo wor", "ld"]).segments[0].pieces == ("Hel", "lo wor", "ld")
    with pytest.raises(UsageError, match="chunk_size"):
        Turn.text("Hello", chunk_size=0)


def test_finish_reason_follows_from_the_turn_unless_set() -> None:
    assert Turn.text("hi").resolved_finish_reason == "stop"
    assert Turn.tool_calls(ToolCallSpec("f")).resolved_finish_reason == "tool_calls"
    assert Turn.text("hi").with_finish_reason("length").resolved_finish_reason == "length"


def test_tool_call_arguments_are_json_from_a_dict_or_raw_from_a_string() -> None:
    assert json.loads(ToolCallSpec("f", {"a": 1}).arguments_json) == {"a": 1}
    assert ToolCallSpec("f", '{"a": 1').arguments_json == '{"a": 1'
    assert ToolCallSpec("f").id.startswith("call_")
    assert ToolCallSpec("f").id != ToolCallSpec("f").id


def test_a_call_written_as_text_is_tool_call_markup_with_name_and_arguments() -> None:
    markup = ToolCallSpec("calculate", {"expression": "15 + 27"}).as_markup()
    assert markup.startswith("<tool_call>")
    assert markup.endswith("</tool_call>")
    assert json.loads(markup.removeprefix("<tool_call>").removesuffix("</tool_call>")) == {
        "name": "calculate",
        "arguments": {"expression": "15 + 27"},
    }


def test_turns_are_immutable_so_extending_one_leaves_it_unchanged() -> None:
    base = Turn.text("a")
    extended = base.then_tokens(3, token="x")
    assert len(base.segments) == 1
    assert extended.segments[1].pieces == ("x", "x", "x")


def test_a_turn_describes_itself_briefly_for_failure_messages() -> None:
    turn = Turn.reasoning("think").then_text("Hello").then_tool_calls(ToolCallSpec("calc", {"x": 1}))
    assert turn.describe() == "reasoning 'think' + content 'Hello' + call calc({\"x\": 1})"
    assert Turn.error(429, "slow down").describe() == "error 429 'slow down'"
