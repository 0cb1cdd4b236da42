"""Scripted replies arrive through the real `openai` client exactly as scripted, sync and async."""

import json
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


def test_text_arrives_in_the_scripted_chunks() -> None:
    with ScriptedModelServer([Turn.text("Hello world", chunk_size=3)]) as model:
        chunks = list(model.openai_client().chat.completions.create(model="m", messages=USER, stream=True))

    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert texts == ["Hel", "lo ", "wor", "ld"]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert {c.id for c in chunks} == {"chatcmpl-scripted-1"}
    assert {c.model for c in chunks} == {"m"}


@pytest.mark.anyio
async def test_text_arrives_in_the_scripted_chunks_through_the_async_client() -> None:
    async with ScriptedModelServer([Turn.text(["Hel", "lo"])]) as model:
        stream = await model.async_openai_client().chat.completions.create(
            model="m", messages=USER, stream=True
        )
        texts = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
    assert texts == ["Hel", "lo"]


def test_native_tool_call_deltas_assemble_into_full_calls_in_the_sdk_stream_helper() -> None:
    broken = ToolCallSpec("search", '{"query": "unclosed', id="call_b")
    script = [
        Turn.text("Let me check.").then_tool_calls(
            ToolCallSpec("calculate", {"expression": "15 + 27"}, id="call_a"), broken, chunk_size=5
        )
    ]
    with (
        ScriptedModelServer(script) as model,
        model.openai_client().chat.completions.stream(model="m", messages=USER) as stream,
    ):
        completion = stream.get_final_completion()

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me check."
    calls = [(c.id, c.function.name, c.function.arguments) for c in choice.message.tool_calls or []]
    assert calls == [
        ("call_a", "calculate", '{"expression": "15 + 27"}'),
        ("call_b", "search", '{"query": "unclosed'),
    ]


def test_tool_call_deltas_have_the_openai_shape_a_first_delta_with_id_and_name_then_argument_pieces() -> None:
    call = ToolCallSpec("calculate", {"expression": "1 + 2"}, id="call_1")
    with ScriptedModelServer([Turn.tool_calls(call, chunk_size=6)]) as model:
        chunks = list(model.openai_client().chat.completions.create(model="m", messages=USER, stream=True))

    deltas = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or [])]
    first, *rest = deltas
    assert (first.index, first.id, first.type) == (0, "call_1", "function")
    assert first.function is not None
    assert first.function.name == "calculate"
    assert all(d.index == 0 and d.id is None for d in rest)
    assert [d.function.arguments for d in rest if d.function] == ['{"expr', "ession", '": "1 ', '+ 2"}']


@pytest.mark.anyio
async def test_parallel_native_calls_assemble_through_the_async_stream_helper() -> None:
    calls = [ToolCallSpec("get_time", {}, id="call_t"), ToolCallSpec("calculate", {"expression": "2*3"})]
    async with ScriptedModelServer([Turn.tool_calls(*calls)]) as model:
        client = model.async_openai_client()
        async with client.chat.completions.stream(model="m", messages=USER) as stream:
            completion = await stream.get_final_completion()

    tool_calls = completion.choices[0].message.tool_calls or []
    assert [c.function.name for c in tool_calls] == ["get_time", "calculate"]
    assert [json.loads(c.function.arguments) for c in tool_calls] == [{}, {"expression": "2*3"}]
    assert tool_calls[0].id == "call_t"


def test_reasoning_content_arrives_before_the_answer() -> None:
    script = [Turn.reasoning("Think", chunk_size=2).then_text("Answer")]
    with ScriptedModelServer(script) as model:
        chunks = list(model.openai_client().chat.completions.create(model="m", messages=USER, stream=True))

    reasoning_and_text: list[tuple[str, Any]] = []
    for chunk in chunks:
        delta = chunk.choices[0].delta
        if getattr(delta, "reasoning_content", None):
            reasoning_and_text.append(("reasoning", delta.reasoning_content))  # type: ignore[attr-defined]
        if delta.content:
            reasoning_and_text.append(("text", delta.content))
    assert reasoning_and_text == [
        ("reasoning", "Th"),
        ("reasoning", "in"),
        ("reasoning", "k"),
        ("text", "Answ"),
        ("text", "er"),
    ]


def test_usage_arrives_in_a_last_chunk_only_when_the_client_asks_for_it() -> None:
    script = [Turn.text("Hi").with_usage(12, 3, reasoning_tokens=1), Turn.text("Hello", chunk_size=1)]
    with ScriptedModelServer(script) as model:
        client = model.openai_client()
        asked = list(
            client.chat.completions.create(
                model="m", messages=USER, stream=True, stream_options={"include_usage": True}
            )
        )
        not_asked = list(client.chat.completions.create(model="m", messages=USER, stream=True))

    assert asked[-1].choices == []
    usage = asked[-1].usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (12, 3, 15)
    assert usage.completion_tokens_details is not None
    assert usage.completion_tokens_details.reasoning_tokens == 1
    assert all(c.usage is None for c in asked[:-1])
    assert all(c.usage is None for c in not_asked)


def test_usage_defaults_to_one_completion_token_per_scripted_chunk() -> None:
    with ScriptedModelServer([Turn.text("Hello", chunk_size=1)]) as model:
        chunks = list(
            model.openai_client().chat.completions.create(
                model="m", messages=USER, stream=True, stream_options={"include_usage": True}
            )
        )
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (0, 5)


def test_calls_written_in_text_arrive_as_plain_content_cut_across_the_markup() -> None:
    call = ToolCallSpec("get_time", {"zone": "UTC"})
    with ScriptedModelServer([Turn.calls_in_text(call, before="Checking. ", chunk_size=5)]) as model:
        chunks = list(model.openai_client().chat.completions.create(model="m", messages=USER, stream=True))

    pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert "".join(pieces) == "Checking. " + call.as_markup()
    assert "<tool_call>" not in pieces  # the tag itself is cut across chunks
    assert all(not c.choices[0].delta.tool_calls for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_a_stream_broken_by_an_error_event_raises_api_error_after_the_text_before_it() -> None:
    script = [Turn.text("partial").then_stream_error("upstream overloaded")]
    received: list[str] = []

    def read_all(stream: openai.Stream[ChatCompletionChunk]) -> None:
        received.extend(chunk.choices[0].delta.content or "" for chunk in stream)

    with ScriptedModelServer(script) as model:
        stream = model.openai_client().chat.completions.create(model="m", messages=USER, stream=True)
        with pytest.raises(openai.APIError, match="upstream overloaded"):
            read_all(stream)
    assert "".join(received) == "partial"


def test_non_streaming_requests_get_one_chat_completion_with_everything_joined() -> None:
    call = ToolCallSpec("calculate", {"expression": "15 + 27"}, id="call_1")
    script = [
        Turn.reasoning("Hmm").then_text("Sure.").then_tool_calls(call).with_usage(9, 4),
        Turn.text("42"),
    ]
    with ScriptedModelServer(script) as model:
        client = model.openai_client()
        with_call = client.chat.completions.create(model="m", messages=USER)
        answer = client.chat.completions.create(model="m", messages=USER)

    message = with_call.choices[0].message
    assert with_call.choices[0].finish_reason == "tool_calls"
    assert message.content == "Sure."
    assert getattr(message, "reasoning_content", None) == "Hmm"
    assert [(c.id, c.function.name, c.function.arguments) for c in message.tool_calls or []] == [  # type: ignore[union-attr]
        ("call_1", "calculate", '{"expression": "15 + 27"}')
    ]
    assert with_call.usage is not None
    assert with_call.usage.total_tokens == 13
    assert answer.choices[0].message.content == "42"
    assert answer.choices[0].finish_reason == "stop"
    assert not model.requests[0].reply.streamed


def test_the_models_endpoint_lists_the_scripted_model() -> None:
    with ScriptedModelServer(model_name="fake-1") as model:
        assert [m.id for m in model.openai_client().models.list()] == ["fake-1"]
