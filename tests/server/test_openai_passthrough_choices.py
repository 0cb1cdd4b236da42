"""Pass-through's `tool_choice`, `parallel_tool_calls` and repair retries, asserted on what the scripted
upstream received and what the `openai` client got."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from passthrough_helpers import ASK, TOOLS, arguments_of, passthrough_server, system_text, upstream

from toolbridge.testing import (
    RecordedRequest,
    ScriptedAnthropicServer,
    ScriptedModelServer,
    ToolCallSpec,
    Turn,
)

PARIS = ToolCallSpec("get_weather", {"city": "Paris"})
ROME = ToolCallSpec("get_weather", {"city": "Rome"})
NAMED = {"type": "function", "function": {"name": "get_time"}}


@pytest.mark.parametrize(
    ("choice", "sent"),
    [
        ("auto", None),
        ("required", "required"),
        (NAMED, {"type": "function", "function": {"name": "get_time"}}),
    ],
)
def test_tool_choice_reaches_a_native_openai_upstream(tmp_path: Path, choice: Any, sent: Any) -> None:
    with (
        ScriptedModelServer([Turn.tool_calls(ToolCallSpec("get_time", {"city": "Paris"}))]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        server.openai().chat.completions.create(model="local", messages=ASK, tools=TOOLS, tool_choice=choice)  # type: ignore[arg-type]
    assert model.requests[0].tool_choice == sent


def test_tool_choice_none_offers_no_tools(tmp_path: Path) -> None:
    with (
        ScriptedModelServer([Turn.text("Sunny, I think.")]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        completion = server.openai().chat.completions.create(
            model="local",
            messages=ASK,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice="none",
        )
    assert completion.choices[0].message.content == "Sunny, I think."
    [request] = model.requests
    assert request.tools == []
    assert "get_weather" not in json.dumps(request.messages)


def test_tool_choice_none_keeps_earlier_calls_as_text_for_a_prompt_mode_model(tmp_path: Path) -> None:
    earlier = [
        *ASK,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "Sunny"},
    ]
    with (
        ScriptedModelServer([Turn.text("It is sunny.")]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        server.openai().chat.completions.create(
            model="local",
            messages=earlier,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice="none",
        )
    *_, assistant, result = model.requests[0].messages
    assert assistant == {
        "role": "assistant",
        "content": '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    }
    assert result == {
        "role": "user",
        "content": '<tool_result name="get_weather" id="call_1">Sunny</tool_result>',
    }


@pytest.mark.parametrize(
    ("choice", "sent"),
    [("required", {"type": "any"}), (NAMED, {"type": "tool", "name": "get_time"})],
)
def test_tool_choice_reaches_an_anthropic_upstream(tmp_path: Path, choice: Any, sent: Any) -> None:
    with ScriptedAnthropicServer([Turn.tool_calls(ToolCallSpec("get_time", {"city": "Paris"}))]) as model:
        claude = {"provider": "anthropic", "model": "claude-test", "base_url": model.base_url, "api_key": "k"}
        with passthrough_server(tmp_path, {"claude": {**claude, "max_retries": 0}}) as server:
            completion = server.openai().chat.completions.create(
                model="claude",
                messages=ASK,  # type: ignore[arg-type]
                tools=TOOLS,  # type: ignore[arg-type]
                tool_choice=choice,
                parallel_tool_calls=False,
            )
    assert model.requests[0].body["tool_choice"] == {**sent, "disable_parallel_tool_use": True}
    [call] = completion.choices[0].message.tool_calls or []
    assert call.function.name == "get_time"


def says_a_call_is_needed(request: RecordedRequest) -> bool:
    return "this request needs a call" in str(request.last_message["content"])


def test_prompt_mode_asks_once_more_when_a_required_call_is_missing(tmp_path: Path) -> None:
    turns = [
        Turn.text("It is probably sunny."),
        Turn.calls_in_text(ToolCallSpec("get_time", {"city": "Paris"}), expect=says_a_call_is_needed),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        chunks = list(
            server.openai().chat.completions.create(
                model="local",
                messages=ASK,  # type: ignore[arg-type]
                tools=TOOLS,  # type: ignore[arg-type]
                tool_choice=NAMED,  # type: ignore[arg-type]
                stream=True,
            )
        )

    # Enforced by instruction: the system prompt says which tool this reply must call.
    assert "you must call the tool `get_time`" in system_text(model.requests[0])
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    # The first reply's text was already streamed; the retry adds the call.
    assert "".join(d.content or "" for d in deltas) == "It is probably sunny."
    [first] = [p for d in deltas for p in d.tool_calls or [] if p.id]
    assert first.function is not None
    assert first.function.name == "get_time"
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def asks_for_get_time_after_a_wrong_call(request: RecordedRequest) -> bool:
    """The correction: the wrong call answered as not run, then the reminder naming the tool."""
    text = json.dumps(request.messages[-2:])
    return "Not run: this request needs a call of the tool `get_time`" in text and (
        "Your reply called `get_weather`, but this request needs a call of the tool `get_time`"
        in str(request.last_message["content"])
    )


def test_prompt_mode_asks_once_more_when_the_named_tool_is_not_the_one_called(tmp_path: Path) -> None:
    turns = [
        Turn.calls_in_text(PARIS),
        Turn.calls_in_text(
            ToolCallSpec("get_time", {"city": "Paris"}), expect=asks_for_get_time_after_a_wrong_call
        ),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        completion = server.openai().chat.completions.create(
            model="local",
            messages=ASK,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice=NAMED,  # type: ignore[arg-type]
        )

    assert len(model.requests) == 2
    [call] = completion.choices[0].message.tool_calls or []
    assert call.function.name == "get_time"  # type: ignore[union-attr]
    assert completion.choices[0].finish_reason == "tool_calls"


def test_with_a_named_tool_only_its_calls_are_passed_on(tmp_path: Path) -> None:
    """As a native API, which makes no other call: no retry when the named call is there."""
    with (
        ScriptedModelServer([Turn.calls_in_text(PARIS, ToolCallSpec("get_time", {"city": "Rome"}))]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        completion = server.openai().chat.completions.create(
            model="local",
            messages=ASK,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice=NAMED,  # type: ignore[arg-type]
        )

    assert len(model.requests) == 1
    [call] = completion.choices[0].message.tool_calls or []
    assert call.function.name == "get_time"  # type: ignore[union-attr]
    assert arguments_of(call) == {"city": "Rome"}


@pytest.mark.parametrize(
    ("choice", "wanted"),
    [("required", "a tool"), (NAMED, "the tool 'get_time'")],
    ids=["required", "named"],
)
def test_a_required_call_still_missing_after_the_retry_is_a_502(
    tmp_path: Path, choice: Any, wanted: str
) -> None:
    """A native API never answers without the call tool_choice demands; a client relying on it (forced
    calls for structured output) is told, rather than handed a reply it cannot use."""
    replies = [Turn.text("Sunny."), Turn.text("Still sunny.", expect=says_a_call_is_needed)]
    received: list[str] = []
    with (
        ScriptedModelServer(replies * 2) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        client = server.openai()
        request: Any = {"model": "local", "messages": ASK, "tools": TOOLS, "tool_choice": choice}
        with pytest.raises(openai.APIStatusError) as whole:
            client.chat.completions.create(**request)
        chunks = client.chat.completions.create(**request, stream=True)
        with pytest.raises(openai.APIError) as streamed:
            received.extend(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)

    assert "In this reply you must call" in system_text(model.requests[0])
    assert whole.value.status_code == 502
    message = str(whole.value.message)
    assert f"did not call {wanted} as tool_choice requires, even when asked again" in message
    assert "(it answered 'Still sunny.')" in message
    assert "".join(received) == "Sunny."  # streamed as it came; the retry's text is not shown twice
    assert not isinstance(streamed.value, openai.APIStatusError)
    assert f"did not call {wanted} as tool_choice requires" in streamed.value.message


def test_a_reply_cut_off_at_the_token_limit_is_answered_as_it_is(tmp_path: Path) -> None:
    """As a native API answers a reply that ran out of tokens before its call: finish_reason length."""
    turns = [Turn.text("Let me see").with_finish_reason("length")] * 2
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        completion = server.openai().chat.completions.create(
            model="local",
            messages=ASK,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            tool_choice="required",
        )
    assert completion.choices[0].message.content == "Let me see"
    assert completion.choices[0].finish_reason == "length"


@pytest.mark.parametrize("tool_mode", ["native", "prompt"])
def test_parallel_tool_calls_false_keeps_the_first_call(tmp_path: Path, tool_mode: str) -> None:
    turn = Turn.tool_calls(PARIS, ROME) if tool_mode == "native" else Turn.calls_in_text(PARIS, ROME)
    with (
        ScriptedModelServer([turn]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, tool_mode)}) as server,
    ):
        completion = server.openai().chat.completions.create(
            model="local",
            messages=ASK,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            parallel_tool_calls=False,
        )
    [call] = completion.choices[0].message.tool_calls or []
    assert arguments_of(call) == {"city": "Paris"}
    if tool_mode == "native":
        assert model.requests[0].body["parallel_tool_calls"] is False
    else:
        assert "Call at most one tool per reply." in system_text(model.requests[0])


def tool_result_says(text: str) -> Any:
    def check(request: RecordedRequest) -> bool:
        return any(m["role"] == "tool" and text in str(m["content"]) for m in request.messages)

    return check


def test_an_unknown_tool_is_repaired_with_one_retry(tmp_path: Path) -> None:
    wrong = ToolCallSpec("weather", {"city": "Paris"})
    turns = [
        Turn.tool_calls(wrong),
        Turn.tool_calls(PARIS, expect=tool_result_says("no tool named 'weather'")),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    [call] = completion.choices[0].message.tool_calls or []
    assert call.id == PARIS.id
    # The model saw its own call and the problem, and the list of the tools it may call.
    retry = model.requests[1].messages
    assert retry[-2]["tool_calls"][0]["function"]["name"] == "weather"
    assert "The tools are: get_weather, get_time." in retry[-1]["content"]


def test_arguments_that_break_the_schema_are_retried_then_returned_as_they_are(tmp_path: Path) -> None:
    broken = ToolCallSpec("get_weather", {"town": "Paris"})
    turns = [
        Turn.tool_calls(broken),
        Turn.tool_calls(broken, expect=tool_result_says("Invalid arguments for tool 'get_weather'")),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    [call] = completion.choices[0].message.tool_calls or []
    assert arguments_of(call) == {"town": "Paris"}
    assert completion.choices[0].finish_reason == "tool_calls"
    assert len(model.requests) == 2  # one retry, as configured by default


def test_a_pattern_that_would_backtrack_is_checked_at_once_and_the_server_answers_on(tmp_path: Path) -> None:
    # The client writes the pattern and steers the model that writes the string: on Python's re the
    # check ran for ever on the event loop (tests/tools/test_validation.py fails cleanly without RE2).
    tool = {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"key": {"type": "string", "pattern": "^(a+)+$"}}},
        },
    }
    backtracking = ToolCallSpec("lookup", {"key": "a" * 40 + "!"})
    turns = [
        Turn.tool_calls(backtracking),
        Turn.tool_calls(backtracking, expect=tool_result_says("does not match")),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=[tool])  # type: ignore[list-item]
        assert server.http().get("/healthz").status_code == 200
    assert completion.choices[0].finish_reason == "tool_calls"
    assert len(model.requests) == 2


def test_repair_retries_are_configurable_and_obvious_slips_need_none(tmp_path: Path) -> None:
    slipped = ToolCallSpec("get_weather", {"city": "Paris", "days": "3"})
    unknown = ToolCallSpec("weather", {"city": "Paris"})
    with (
        ScriptedModelServer([Turn.tool_calls(slipped), Turn.tool_calls(unknown)]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}, server={"repair_retries": 0}) as server,
    ):
        client = server.openai()
        coerced = client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
        unrepaired = client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    assert arguments_of((coerced.choices[0].message.tool_calls or [])[0]) == {"city": "Paris", "days": 3}
    assert (unrepaired.choices[0].message.tool_calls or [])[0].function.name == "weather"
    assert len(model.requests) == 2


def test_unreadable_text_calls_are_retried_with_the_dialects_feedback(tmp_path: Path) -> None:
    def told_it_could_not_be_read(request: RecordedRequest) -> bool:
        return "could not be parsed" in str(request.last_message["content"])

    turns = [
        Turn.text('<tool_call>{"arguments": {"city": "Paris"}}</tool_call>'),
        Turn.calls_in_text(PARIS, expect=told_it_could_not_be_read),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    [call] = completion.choices[0].message.tool_calls or []
    assert arguments_of(call) == {"city": "Paris"}


def test_a_streamed_repair_shows_the_text_once_and_the_repaired_calls(tmp_path: Path) -> None:
    wrong = ToolCallSpec("weather", {"city": "Paris"})
    turns = [
        Turn.text("Checking.").then_tool_calls(wrong),
        Turn.text("Checking again.", expect=tool_result_says("no tool named 'weather'")).then_tool_calls(
            PARIS
        ),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
        server.openai().chat.completions.stream(model="local", messages=ASK, tools=TOOLS) as stream,  # type: ignore[arg-type]
    ):
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Checking."
    assert [call.id for call in message.tool_calls or []] == [PARIS.id]
