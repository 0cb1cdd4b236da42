"""The Anthropic adapter over real HTTP, through the real `anthropic` SDK and a scripted Messages API."""

from __future__ import annotations

import base64
import json

import pytest

from toolbridge.errors import ConfigError, ModelError, ToolsNotSupportedError
from toolbridge.models import (
    AnthropicModel,
    Finish,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from toolbridge.testing import ScriptedAnthropicServer, ToolCallSpec, Turn
from toolbridge.types import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolSpec,
    Usage,
    UserMessage,
)

pytestmark = pytest.mark.anyio

QUESTION: list[Message] = [UserMessage(content="What is 15 + 27?")]
CALCULATE = ToolSpec(
    name="calculate",
    description="Calculate an arithmetic expression.",
    input_schema={
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)


def claude(scripted: ScriptedAnthropicServer, **options: object) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=scripted.base_url, api_key="sk-ant-test", **options)  # type: ignore[arg-type]


async def collect(model: AnthropicModel, request: ModelRequest) -> list[ModelEvent]:
    try:
        async with model.stream(request) as events:
            return [event async for event in events]
    finally:
        await model.aclose()


async def test_thinking_text_usage_and_stop_reason_map_to_our_events() -> None:
    turn = Turn.reasoning("Add them.", chunk_size=3).then_text("It is 42.", chunk_size=4).with_usage(20, 9)
    async with ScriptedAnthropicServer([turn]) as scripted:
        events = await collect(claude(scripted), ModelRequest(QUESTION))

    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Add them."
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["It i", "s 42", "."]
    assert events[-2:] == [UsageReport(Usage(input_tokens=20, output_tokens=9)), Finish("stop")]


async def test_tool_use_blocks_become_indexed_call_deltas() -> None:
    calls = [
        ToolCallSpec("calculate", {"expression": "15 + 27"}, id="toolu_1"),
        ToolCallSpec("get_current_time", {}, id="toolu_2"),
    ]
    turn = Turn.text("Let me check.").then_tool_calls(*calls, chunk_size=6)
    async with ScriptedAnthropicServer([turn]) as scripted:
        events = await collect(claude(scripted), ModelRequest(QUESTION, tools=[CALCULATE]))

    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    first = [d for d in deltas if d.index == 0]
    assert (first[0].id, first[0].name) == ("toolu_1", "calculate")
    assert json.loads("".join(d.arguments for d in first)) == {"expression": "15 + 27"}
    second = [d for d in deltas if d.index == 1]
    assert (second[0].id, second[0].name) == ("toolu_2", "get_current_time")
    assert json.loads("".join(d.arguments for d in second)) == {}
    assert events[-1] == Finish("tool_calls")


async def test_the_conversation_goes_out_with_a_separate_system_prompt_and_result_blocks() -> None:
    pixel = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    calls = [
        ToolCall(id="toolu_1", name="calculate", arguments={"expression": "15 + 27"}),
        ToolCall(id="toolu_2", name="plot", arguments={}),
    ]
    messages: list[Message] = [
        SystemMessage(content="Be brief."),
        *QUESTION,
        AssistantMessage(content="Checking.", reasoning="secret thoughts", tool_calls=calls),
        ToolMessage(name="calculate", result=ToolResult(call_id="toolu_1", content=[TextPart(text="42")])),
        ToolMessage(
            name="plot",
            result=ToolResult(
                call_id="toolu_2", content=[ImagePart(data=pixel, mime_type="image/png")], is_error=True
            ),
        ),
    ]
    async with ScriptedAnthropicServer([Turn.text("42.")]) as scripted:
        model = claude(scripted, settings=ModelSettings(temperature=0.3))
        await collect(model, ModelRequest(messages, tools=[CALCULATE]))
        body = scripted.requests[0].body

    assert body["model"] == "claude-test"
    assert body["stream"] is True
    assert body["system"] == "Be brief."
    assert body["max_tokens"] == 4096  # required by the API; the profile's default
    assert "temperature" not in body  # the current API takes no sampling parameters
    assert body["tools"] == [
        {
            "name": "calculate",
            "description": "Calculate an arithmetic expression.",
            "input_schema": {
                "type": "object",
                "properties": {"expression": {"type": "string"}},
                "required": ["expression"],
            },
        }
    ]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What is 15 + 27?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "calculate",
                    "input": {"expression": "15 + 27"},
                },
                {"type": "tool_use", "id": "toolu_2", "name": "plot", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "42"}],
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_2",
                    "content": [
                        {"type": "text", "text": "[image image/png, 9 bytes]"},
                        {
                            "type": "image",
                            "source": {"type": "base64", "media_type": "image/png", "data": pixel},
                        },
                    ],
                    "is_error": True,
                },
            ],
        },
    ]


async def test_leaving_early_closes_the_response() -> None:
    turn = Turn.text("Hello").then_tokens(2000, token=" more", delay=0.01)
    async with ScriptedAnthropicServer([turn]) as scripted:
        model = claude(scripted)
        async with model.stream(ModelRequest(QUESTION)) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    break
        reply = await scripted.wait_for_reply_async(1)
        await model.aclose()
    assert reply.client_disconnected
    assert reply.chunks_sent < reply.chunks_total


@pytest.mark.parametrize(
    ("status", "message", "advice"),
    [
        (401, "invalid x-api-key", "the configured api_key"),
        (404, "model: claude-nonexistent", "Check the model id"),
        (529, "Overloaded", "Try again later"),
        (400, "max_tokens: 100000 > 64000, which is the maximum", "rejected the request"),
    ],
)
async def test_status_errors_are_mapped_with_status_and_body(status: int, message: str, advice: str) -> None:
    async with ScriptedAnthropicServer([Turn.error(status, message)]) as scripted:
        with pytest.raises(ModelError) as raised:
            await collect(claude(scripted, max_retries=0), ModelRequest(QUESTION, tools=[CALCULATE]))
    error = raised.value
    assert type(error) is ModelError
    assert error.status == status
    assert isinstance(error.body, dict)
    assert error.body["error"]["message"] == message
    assert message in str(error)
    assert advice in str(error)


async def test_a_status_error_keeps_anthropics_error_type_as_its_code() -> None:
    async with ScriptedAnthropicServer([Turn.error(529, "Overloaded")]) as scripted:
        with pytest.raises(ModelError) as raised:
            await collect(claude(scripted, max_retries=0), ModelRequest(QUESTION))
    assert (raised.value.status, raised.value.code) == (529, "overloaded_error")
    assert "content-type" in raised.value.headers


async def test_an_error_event_inside_the_stream_is_a_model_error() -> None:
    turn = Turn.text("Partial").then_stream_error("Overloaded")
    async with ScriptedAnthropicServer([turn]) as scripted:
        with pytest.raises(ModelError, match="broke off with an error: Overloaded") as raised:
            await collect(claude(scripted), ModelRequest(QUESTION))
    assert not isinstance(raised.value, ToolsNotSupportedError)


async def test_a_refused_connection_is_reported(unused_port: int) -> None:
    model = AnthropicModel("claude", base_url=f"http://127.0.0.1:{unused_port}", api_key="k", max_retries=0)
    with pytest.raises(ModelError, match="cannot connect to"):
        await collect(model, ModelRequest(QUESTION))


def test_the_key_comes_from_the_environment_and_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        AnthropicModel("claude-sonnet-4-5")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    model = AnthropicModel("claude-sonnet-4-5")
    assert "sk-ant-secret" not in repr(model)
    assert model.base_url == "https://api.anthropic.com"


async def test_a_requests_own_settings_go_out_under_anthropics_names() -> None:
    settings = ModelSettings(
        top_p=0.5,
        stop=("END",),
        user="user-42",
        seed=7,
        response_format={"type": "json_object"},
        parallel_tool_calls=False,
    )
    async with ScriptedAnthropicServer([Turn.text("Hi.")]) as scripted:
        await collect(claude(scripted), ModelRequest(QUESTION, tools=[CALCULATE], settings=settings))
        body = scripted.requests[0].body

    assert body["stop_sequences"] == ["END"]
    assert body["metadata"] == {"user_id": "user-42"}
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    # Not in the Messages API (and sampling parameters are not taken by current models): left out.
    for unsent in ("top_p", "seed", "response_format", "parallel_tool_calls"):
        assert unsent not in body
