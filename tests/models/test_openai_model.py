"""The OpenAI-compatible adapter over real HTTP: what it sends, what it yields, how it closes.

Every test goes through the real `openai` SDK against a server on 127.0.0.1 (the scripted model, or a
raw SSE endpoint for dialects the scripted model does not speak).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence

import anyio
import pytest

from toolbridge.errors import ConfigError, ModelError
from toolbridge.models import (
    Finish,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    OpenAIChatModel,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn
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

from .conftest import RawChatServer, chunk

pytestmark = pytest.mark.anyio

QUESTION: list[Message] = [UserMessage(content="What is 15 + 27?")]
CALCULATE = ToolSpec(
    name="calculate",
    description="Calculate an arithmetic expression.",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)


async def collect(model: OpenAIChatModel, request: ModelRequest) -> list[ModelEvent]:
    try:
        async with model.stream(request) as events:
            return [event async for event in events]
    finally:
        await model.aclose()


def text_of(events: Sequence[ModelEvent], kind: type[TextDelta] | type[ReasoningDelta] = TextDelta) -> str:
    return "".join(event.text for event in events if isinstance(event, kind))


# -- events ------------------------------------------------------------------------------------------


async def test_reasoning_text_usage_and_finish_arrive_in_order_with_finish_last() -> None:
    turn = Turn.reasoning("Adding.", chunk_size=3).then_text("It is 42.", chunk_size=2).with_usage(11, 7)
    async with ScriptedModelServer([turn]) as scripted:
        model = OpenAIChatModel("qwen3", provider="vllm", base_url=scripted.base_url)
        events = await collect(model, ModelRequest(QUESTION))

    assert text_of(events, ReasoningDelta) == "Adding."
    assert text_of(events) == "It is 42."
    assert next(e for e in events if isinstance(e, TextDelta)) == TextDelta("It")  # streamed, not joined
    assert events[-2:] == [UsageReport(Usage(input_tokens=11, output_tokens=7)), Finish("stop")]
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_text])


async def test_native_tool_calls_stream_as_deltas_indexed_per_call() -> None:
    calls = [
        ToolCallSpec("calculate", {"expression": "15 + 27"}, id="call_a"),
        ToolCallSpec("get_current_time", {"timezone": "UTC"}, id="call_b"),
    ]
    async with ScriptedModelServer([Turn.tool_calls(*calls, chunk_size=5)]) as scripted:
        model = OpenAIChatModel("m", provider="ollama", base_url=scripted.base_url)
        events = await collect(model, ModelRequest(QUESTION, tools=[CALCULATE]))

    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    for index, call in enumerate(calls):
        mine = [d for d in deltas if d.index == index]
        assert mine[0].id == call.id
        assert mine[0].name == call.name
        assert all(d.id is None and d.name is None for d in mine[1:])
        assert json.loads("".join(d.arguments for d in mine)) == call.arguments
    assert len([d for d in deltas if d.index == 0]) > 2  # the arguments came in pieces
    assert events[-1] == Finish("tool_calls")


async def test_sse_as_servers_write_it_is_read_and_the_connection_is_kept_for_the_next_request(
    raw_chat_server: Callable[..., RawChatServer],
) -> None:
    # CRLF line ends, a keep-alive comment, an event name, one event split over two writes; after
    # [DONE] the rest of the body is read, so the next request goes out on the same connection.
    hello = json.dumps(chunk({"content": "Hel"})).encode()
    server = raw_chat_server(
        [
            b": keep-alive\r\n\r\n",
            b"event: chunk\r\ndata: " + hello[:20],
            hello[20:] + b"\r\n\r\n",
            chunk({"content": "lo."}),
            chunk({}, "stop"),
        ]
    )
    model = OpenAIChatModel("m", provider="vllm", base_url=server.base_url)
    try:
        for _ in range(2):
            async with model.stream(ModelRequest(QUESTION)) as events:
                received = [event async for event in events]
            assert text_of(received) == "Hello."
            assert received[-1] == Finish("stop")
    finally:
        await model.aclose()
    assert len(server.client_ports) == 2
    assert server.client_ports[0] == server.client_ports[1]


async def test_a_server_that_keeps_the_stream_open_after_done_does_not_hold_the_reply_up(
    raw_chat_server: Callable[..., RawChatServer],
) -> None:
    server = raw_chat_server([chunk({"content": "Hi."}), chunk({}, "stop")], hold_open_after_done=True)
    model = OpenAIChatModel("m", provider="vllm", base_url=server.base_url)
    try:
        with anyio.fail_after(30):  # only against a hang
            events = await collect(model, ModelRequest(QUESTION))
        assert not server.body_ended.is_set(), "the reply waited for the end of the body"
    finally:
        server.release.set()
    assert text_of(events) == "Hi."
    assert events[-1] == Finish("stop")


async def test_a_reply_that_ends_early_is_a_cut_off_error_not_a_stop_or_a_connection_failure(
    raw_chat_server: Callable[..., RawChatServer],
) -> None:
    """No finish_reason and no [DONE]: the reply is incomplete, not a stop; a body cut mid-reply is not
    a server that cannot be reached. Either end alone (a finish_reason, or [DONE]) is a complete reply."""
    unfinished = raw_chat_server([chunk({"content": "The answer is"})], ending="none")
    dropped = raw_chat_server([chunk({"content": "The answer is"})], ending="cut")
    finish_only = raw_chat_server([chunk({"content": "Hi."}, "stop")], ending="none")
    done_only = raw_chat_server([chunk({"content": "Hi."})])
    failures: list[ModelError] = []
    for server in (unfinished, dropped):
        model = OpenAIChatModel("m", provider="vllm", base_url=server.base_url, max_retries=0)
        with pytest.raises(ModelError) as failed:
            await collect(model, ModelRequest(QUESTION))
        failures.append(failed.value)
    complete = [
        await collect(OpenAIChatModel("m", provider="vllm", base_url=server.base_url), ModelRequest(QUESTION))
        for server in (finish_only, done_only)
    ]

    for failure, server in zip(failures, (unfinished, dropped), strict=True):
        assert failure.kind == "stream_error"
        assert f"the reply from {server.base_url} was cut off" in str(failure)
        assert "cannot connect" not in str(failure)
    assert "ended with neither a finish_reason nor [DONE]" in str(failures[0])
    assert "the connection was lost before the reply ended" in str(failures[1])
    assert [text_of(events) for events in complete] == ["Hi.", "Hi."]
    assert complete[0][-1] == Finish("stop")


async def test_a_reasoning_field_is_read_once_even_when_a_server_sends_it_under_both_names(
    raw_chat_server: Callable[..., RawChatServer],
) -> None:
    # vLLM while renaming `reasoning_content` to `reasoning` sent both; Ollama sends `reasoning`.
    server = raw_chat_server(
        [
            chunk({"role": "assistant", "reasoning": "Think", "reasoning_content": "Think"}),
            chunk({"reasoning": "ing."}),
            chunk({"content": "Done."}),
            chunk({}, "stop"),
        ]
    )
    model = OpenAIChatModel("qwen3", provider="ollama", base_url=server.base_url)
    events = await collect(model, ModelRequest(QUESTION))
    assert text_of(events, ReasoningDelta) == "Thinking."
    assert text_of(events) == "Done."


async def test_repeated_ids_names_late_stop_and_usage_inside_the_choice_are_normalized(
    raw_chat_server: Callable[..., RawChatServer],
) -> None:
    call = {"index": 0, "id": "call_1", "type": "function"}
    server = raw_chat_server(
        [
            chunk({"tool_calls": [{**call, "function": {"name": "calculate", "arguments": '{"expr'}}]}),
            chunk(
                {"tool_calls": [{**call, "function": {"name": "calculate", "arguments": 'ession": "1"}'}}]}
            ),
            # Moonshot reports usage in the choice; older Ollama said "stop" after calls.
            chunk({}, "stop", usage={"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}),
        ]
    )
    model = OpenAIChatModel("kimi", provider="moonshot", base_url=server.base_url, api_key="k")
    events = await collect(model, ModelRequest(QUESTION, tools=[CALCULATE]))
    assert events == [
        ToolCallDelta(index=0, id="call_1", name="calculate", arguments='{"expr'),
        ToolCallDelta(index=0, arguments='ession": "1"}'),
        UsageReport(Usage(input_tokens=3, output_tokens=4)),
        Finish("tool_calls"),
    ]


async def test_chunks_are_read_as_plain_json_and_junk_in_them_is_passed_over(
    raw_chat_server: Callable[..., RawChatServer],
) -> None:
    # Chunks stay the JSON they came as (no typed SDK object per chunk), so what a server gets wrong in
    # them must not break the stream: nulls and junk where objects belong, and arguments as an object.
    server = raw_chat_server(
        [
            chunk({"role": "assistant", "content": None, "tool_calls": None}),
            {"id": "c1", "object": "chat.completion.chunk", "choices": None},
            {"id": "c1", "object": "chat.completion.chunk", "choices": ["junk", {"delta": "junk"}]},
            chunk({"content": "Adding up."}),
            chunk({"tool_calls": ["junk", {"index": 0, "id": "call_1", "function": None}]}),
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "function": {"name": "calculate", "arguments": {"expression": "1+1"}}}
                    ]
                }
            ),
            chunk({}, "tool_calls"),
        ]
    )
    model = OpenAIChatModel("llama3", provider="ollama", base_url=server.base_url)
    events = await collect(model, ModelRequest(QUESTION, tools=[CALCULATE]))
    assert events == [
        TextDelta("Adding up."),
        ToolCallDelta(index=0, id="call_1"),
        ToolCallDelta(index=0, name="calculate", arguments='{"expression": "1+1"}'),
        Finish("tool_calls"),
    ]


# -- what goes out -----------------------------------------------------------------------------------


async def test_a_conversation_with_calls_and_results_is_sent_in_the_wire_format() -> None:
    call = ToolCall(id="call_1", name="calculate", arguments={"expression": "15 + 27"})
    failed = ToolCall(id="call_2", name="calculate", arguments={"expression": "1/0"})
    messages: list[Message] = [
        SystemMessage(content="Be brief."),
        *QUESTION,
        AssistantMessage(content="", reasoning="I should add.", tool_calls=[call, failed]),
        ToolMessage(name="calculate", result=ToolResult(call_id="call_1", content=[TextPart(text="42")])),
        ToolMessage(
            name="calculate", result=ToolResult.error("call_2", "Division by zero.", kind="server_error")
        ),
        AssistantMessage(content="It is 42."),
        UserMessage(content="Thanks"),
    ]
    async with ScriptedModelServer([Turn.text("You're welcome.")]) as scripted:
        model = OpenAIChatModel("deepseek-chat", provider="deepseek", base_url=scripted.base_url, api_key="k")
        await collect(model, ModelRequest(messages, tools=[CALCULATE]))
        sent = scripted.requests[0]

    assert sent.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 15 + 27?"},
        {
            "role": "assistant",
            "content": None,  # DeepSeek rejects reasoning sent back, so it is left out
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "calculate", "arguments": '{"expression": "15 + 27"}'},
                },
                {
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": "calculate", "arguments": '{"expression": "1/0"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "42"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Error: Division by zero."},
        {"role": "assistant", "content": "It is 42."},
        {"role": "user", "content": "Thanks"},
    ]
    assert sent.model == "deepseek-chat"
    assert sent.stream
    assert sent.include_usage
    assert sent.tools == [
        {
            "type": "function",
            "function": {
                "name": "calculate",
                "description": "Calculate an arithmetic expression.",
                "parameters": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",  # MCP's dialect: kept
                    "type": "object",
                    "properties": {"expression": {"type": "string"}},
                    "required": ["expression"],
                },
            },
        }
    ]
    assert sent.tool_choice is None  # left to the server's default


async def test_reasoning_is_sent_back_where_the_family_wants_it() -> None:
    messages: list[Message] = [*QUESTION, AssistantMessage(content="42", reasoning="15 + 27 = 42")]
    async with ScriptedModelServer([Turn.text("ok")]) as scripted:
        model = OpenAIChatModel(
            "kimi-k2-thinking", provider="moonshot", base_url=scripted.base_url, api_key="k"
        )
        await collect(model, ModelRequest(messages))
        assert scripted.requests[0].messages[-1] == {
            "role": "assistant",
            "content": "42",
            "reasoning_content": "15 + 27 = 42",
        }


PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()


@pytest.mark.parametrize(("provider", "images_sent"), [("openai", True), ("vllm", False)])
async def test_images_in_tool_results_go_as_images_only_where_the_endpoint_takes_them(
    provider: str, images_sent: bool
) -> None:
    result = ToolResult(
        call_id="call_1", content=[TextPart(text="a chart"), ImagePart(data=PIXEL, mime_type="image/png")]
    )
    messages: list[Message] = [
        *QUESTION,
        AssistantMessage(tool_calls=[ToolCall(id="call_1", name="plot")]),
        ToolMessage(name="plot", result=result),
    ]
    async with ScriptedModelServer([Turn.text("ok")]) as scripted:
        model = OpenAIChatModel("m", provider=provider, base_url=scripted.base_url, api_key="k")
        await collect(model, ModelRequest(messages))
        sent = scripted.requests[0].messages

    tool_message = sent[2]
    assert tool_message["role"] == "tool"
    assert tool_message["content"].startswith("a chart\n[image image/png, ")  # always described in words
    if images_sent:
        assert sent[3]["role"] == "user"
        assert sent[3]["content"][1] == {
            "type": "image_url",
            "image_url": {"url": f"data:image/png;base64,{PIXEL}"},
        }
    else:
        assert len(sent) == 3


@pytest.mark.parametrize(
    ("provider", "token_field", "usage_asked"),
    [
        ("openai", "max_completion_tokens", True),
        ("deepseek", "max_tokens", True),
        ("llamacpp", "max_tokens", False),
    ],
)
async def test_settings_use_each_familys_parameter_names_and_requests_override_model_defaults(
    provider: str, token_field: str, usage_asked: bool
) -> None:
    async with ScriptedModelServer([Turn.text("a"), Turn.text("b")]) as scripted:
        model = OpenAIChatModel(
            "m",
            provider=provider,
            base_url=scripted.base_url,
            api_key="k",
            settings=ModelSettings(temperature=0.2, max_tokens=100),
        )
        await collect(model, ModelRequest(QUESTION))
        await collect(model, ModelRequest(QUESTION, settings=ModelSettings(temperature=0.9)))
        first, second = (request.body for request in scripted.requests)

    assert (first["temperature"], first[token_field]) == (0.2, 100)
    assert (second["temperature"], second[token_field]) == (0.9, 100)
    assert ("stream_options" in first) is usage_asked


# -- closing early -----------------------------------------------------------------------------------


async def test_leaving_the_stream_early_closes_the_response_and_the_server_sees_the_hang_up() -> None:
    call = ToolCallSpec("get_current_time", {"timezone": "UTC"})
    turn = Turn.calls_in_text(call).then_tokens(2000, token=" (waiting for the tool result...)", delay=0.01)
    async with ScriptedModelServer([turn]) as scripted:
        model = OpenAIChatModel("m", provider="llamacpp", base_url=scripted.base_url)
        text = ""
        async with model.stream(ModelRequest(QUESTION)) as events:
            async for event in events:
                text += event.text if isinstance(event, TextDelta) else ""
                if text.endswith("</tool_call>"):
                    break
        reply = await scripted.wait_for_reply_async(1)
        await model.aclose()

    assert text == call.as_markup()
    assert reply.client_disconnected
    assert reply.chunks_sent < reply.chunks_total
    assert reply.segment_ended_at[1] is None  # the filler never finished


# -- keys --------------------------------------------------------------------------------------------


async def test_an_openai_key_in_the_environment_is_never_sent_to_another_provider(
    raw_chat_server: Callable[..., RawChatServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-do-not-leak")
    server = raw_chat_server([chunk({"content": "hi"}), chunk({}, "stop")])
    model = OpenAIChatModel("m", provider="lmstudio", base_url=server.base_url)
    await collect(model, ModelRequest(QUESTION))
    assert server.headers[0]["authorization"] == "Bearer lm-studio"


def test_a_provider_that_needs_a_key_says_which_variable_to_set() -> None:
    with pytest.raises(ConfigError, match=r"DEEPSEEK_API_KEY") as raised:
        OpenAIChatModel("deepseek-chat", provider="deepseek")
    assert "${DEEPSEEK_API_KEY}" in str(raised.value)


def test_the_key_is_taken_from_the_environment_and_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-secret-value")
    model = OpenAIChatModel("deepseek-chat", provider="deepseek")
    assert "sk-secret-value" not in repr(model)
    assert "sk-secret-value" not in str(vars(model))
    assert model.base_url == "https://api.deepseek.com"


def test_an_unknown_or_non_openai_provider_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not an OpenAI-compatible provider"):
        OpenAIChatModel("m", provider="anthropic")
    with pytest.raises(ConfigError, match="base_url"):
        OpenAIChatModel("m", provider="openai-compatible")
