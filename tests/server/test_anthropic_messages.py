"""`/v1/messages`: Anthropic's Messages API in front of a configured model. The official `anthropic` SDK
drives `toolbridge serve`, streaming and not; scripted upstreams answer over the real OpenAI wire,
natively or with their calls leaked as text (Hermes, Qwen3 XML), which come back as `tool_use` blocks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import pytest
from passthrough_helpers import passthrough_server, system_text, upstream
from server_helpers import RunningServer

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

WEATHER: dict[str, Any] = {
    "name": "get_weather",
    "description": "The current weather in a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
ASK: list[Any] = [{"role": "user", "content": "What's the weather in Paris?"}]
CALL = ToolCallSpec("get_weather", {"city": "Paris"})


def client(server: RunningServer, **options: Any) -> anthropic.Anthropic:
    options = {"api_key": server.token or "unused", **options}
    return anthropic.Anthropic(base_url=server.url, max_retries=0, **options)


@pytest.mark.parametrize(
    ("tool_mode", "turn"),
    [
        ("native", Turn.text("Let me look.").then_tool_calls(CALL).with_usage(12, 7)),
        ("prompt", Turn.calls_in_text(CALL, before="Let me look.").with_usage(12, 7)),
        (
            "prompt",
            Turn.text(
                "Let me look.<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
            ).with_usage(12, 7),
        ),
    ],
    ids=["native", "hermes-text", "qwen3-xml-text"],
)
def test_calls_come_back_as_tool_use_blocks(tmp_path: Path, tool_mode: str, turn: Turn) -> None:
    with (
        ScriptedModelServer([turn]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, tool_mode)}) as server,
    ):
        message = client(server).messages.create(
            model="local",
            max_tokens=256,
            system="Be brief.",
            messages=ASK,
            tools=[WEATHER],  # type: ignore[list-item]
        )

    assert message.stop_reason == "tool_use"
    assert message.model == "local"
    text, tool_use = message.content
    assert isinstance(text, anthropic.types.TextBlock)
    assert text.text == "Let me look."
    assert isinstance(tool_use, anthropic.types.ToolUseBlock)
    assert (tool_use.name, tool_use.input) == ("get_weather", {"city": "Paris"})
    assert message.usage.input_tokens == 12
    [request] = model.requests
    assert system_text(request).startswith("Be brief.")


def test_a_streamed_reply_gives_text_then_the_call_as_the_sdk_reads_it(tmp_path: Path) -> None:
    turn = Turn.calls_in_text(CALL, before="Checking.").with_usage(5, 3)
    with (
        ScriptedModelServer([turn]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
        client(server).messages.stream(
            model="local",
            max_tokens=256,
            messages=ASK,
            tools=[WEATHER],  # type: ignore[list-item]
        ) as stream,
    ):
        kinds = [event.type for event in stream]
        message = stream.get_final_message()

    assert kinds[0] == "message_start"
    assert kinds[-1] == "message_stop"
    assert "message_delta" in kinds
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert message.content[0].text == "Checking."  # type: ignore[union-attr]
    assert message.content[1].input == {"city": "Paris"}  # type: ignore[union-attr]
    assert message.stop_reason == "tool_use"


def test_tool_results_and_thinking_go_to_the_model_and_reasoning_comes_back_as_thinking(
    tmp_path: Path,
) -> None:
    turn = Turn.reasoning("The tool said sunny.").then_text("It is sunny.")
    conversation: list[Any] = [
        *ASK,
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny, 21 C"}],
        },
    ]
    with (
        ScriptedModelServer([turn]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        message = client(server).messages.create(
            model="local", max_tokens=256, messages=conversation, tools=[WEATHER]
        )  # type: ignore[list-item]

    assert message.stop_reason == "end_turn"
    thinking, text = message.content
    assert isinstance(thinking, anthropic.types.ThinkingBlock)
    assert thinking.thinking == "The tool said sunny."
    assert text.text == "It is sunny."  # type: ignore[union-attr]
    [request] = model.requests
    assert request.messages[-2]["tool_calls"][0]["id"] == "toolu_1"
    assert request.messages[-1] == {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny, 21 C"}


def test_errors_are_in_anthropics_shape_and_status(tmp_path: Path) -> None:
    with passthrough_server(tmp_path, {}) as server:
        with pytest.raises(anthropic.NotFoundError) as unknown:
            client(server).messages.create(model="nope", max_tokens=10, messages=ASK)
        with pytest.raises(anthropic.BadRequestError) as bad:
            client(server).messages.create(model="nope", max_tokens=0, messages=ASK)

    assert unknown.value.body["error"]["type"] == "not_found_error"  # type: ignore[index]
    assert "no model named 'nope'" in unknown.value.message
    assert bad.value.body["type"] == "error"  # type: ignore[index]
    assert "max_tokens" in bad.value.message


def test_a_wrong_key_is_refused_in_anthropics_shape(tmp_path: Path) -> None:
    with passthrough_server(tmp_path, {}, token="right-token") as server:
        with pytest.raises(anthropic.AuthenticationError) as refused:
            client(server, api_key="wrong").messages.create(model="local", max_tokens=10, messages=ASK)
        accepted = client(server).messages.count_tokens(model="local", messages=ASK)

    assert refused.value.body == {  # Anthropic's shape, not OpenAI's
        "type": "error",
        "error": {"type": "authentication_error", "message": refused.value.body["error"]["message"]},  # type: ignore[index]
    }
    assert accepted.input_tokens > 0
