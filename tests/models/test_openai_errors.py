"""Every failure of an OpenAI-compatible endpoint becomes a `ModelError` that says what to do.

The servers' own phrasings for "this model/server takes no tools" become `ToolsNotSupportedError`,
so the agent loop can switch to prompt mode; each phrasing below is what that server really answers.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from toolbridge.errors import ModelError, ToolsNotSupportedError
from toolbridge.models import ModelRequest, OpenAIChatModel, TextDelta
from toolbridge.testing import ScriptedModelServer, Turn
from toolbridge.types import Message, ToolSpec, UserMessage

from .conftest import RawChatServer, chunk

pytestmark = pytest.mark.anyio

QUESTION: list[Message] = [UserMessage(content="What is 15 + 27?")]
TOOLS = [ToolSpec(name="calculate")]


async def run(model: OpenAIChatModel, *, tools: bool = True) -> str:
    try:
        async with model.stream(ModelRequest(QUESTION, tools=TOOLS if tools else ())) as events:
            return "".join([e.text async for e in events if isinstance(e, TextDelta)])
    finally:
        await model.aclose()


async def failure(
    turns: list[Turn], *, provider: str = "vllm", tools: bool = True, max_retries: int = 0
) -> tuple[ModelError, ScriptedModelServer]:
    async with ScriptedModelServer(turns) as scripted:
        model = OpenAIChatModel(
            "qwen3", provider=provider, base_url=scripted.base_url, api_key="sk-test", max_retries=max_retries
        )
        with pytest.raises(ModelError) as raised:
            await run(model, tools=tools)
    return raised.value, scripted


TOOLS_REJECTED = [
    pytest.param(400, '"qwen2.5-coder:1.5b" does not support tools', id="ollama"),
    pytest.param(400, "registry.ollama.ai/library/gemma2:2b does not support tools", id="ollama-older"),
    pytest.param(
        400,
        '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
        id="vllm",
    ),
    pytest.param(400, "Currently only named tools are supported.", id="vllm-before-0.6"),
    pytest.param(500, "tools param requires --jinja flag", id="llama.cpp"),
    pytest.param(400, "Unsupported param: tools", id="llama.cpp-older"),
    pytest.param(400, "This model does not support tool use.", id="lm-studio"),
    pytest.param(400, "Unsupported parameter: 'tools' is not supported with this model.", id="openai-o1"),
    pytest.param(400, "deepseek-reasoner does not support Function Calling", id="deepseek-reasoner"),
    pytest.param(422, "Tools are not supported for this model", id="tgi-422"),
]


@pytest.mark.parametrize(("status", "message"), TOOLS_REJECTED)
async def test_each_servers_tools_rejection_becomes_tools_not_supported(status: int, message: str) -> None:
    error, _ = await failure([Turn.error(status, message)])
    assert isinstance(error, ToolsNotSupportedError)
    assert error.status == status
    assert message in str(error.body)
    assert 'tool_mode "prompt"' in str(error)
    assert error.model == "vllm:qwen3"


async def test_the_same_answer_to_a_request_without_tools_is_an_ordinary_error() -> None:
    error, _ = await failure([Turn.error(400, "model does not support tools")], tools=False)
    assert type(error) is ModelError


async def test_a_bad_tool_schema_is_not_mistaken_for_missing_tool_support() -> None:
    message = "Invalid schema for function 'calculate': 'object' is not valid under any of the given schemas."
    error, _ = await failure([Turn.error(400, message)])
    assert type(error) is ModelError
    assert error.status == 400
    assert "rejected the request" in str(error)


@pytest.mark.parametrize(
    ("status", "message", "advice"),
    [
        (401, "Incorrect API key provided: sk-test.", "the configured api_key"),
        (403, "Project does not have access to model qwen3", "may use model 'qwen3'"),
        (404, "The model `qwen3` does not exist", "Check the model id"),
        (500, "upstream crashed", "Try again later"),
    ],
)
async def test_status_errors_keep_status_and_body_and_say_what_to_do(
    status: int, message: str, advice: str
) -> None:
    error, _ = await failure([Turn.error(status, message)])
    assert error.status == status
    assert isinstance(error.body, dict)
    assert error.body["message"] == message
    assert message in str(error)
    assert advice in str(error)
    assert type(error) is ModelError


async def test_a_missing_ollama_model_points_at_ollama_list() -> None:
    error, _ = await failure(
        [Turn.error(404, 'model "qwen9" not found, try pulling it first')], provider="ollama"
    )
    assert "`ollama list`" in str(error)


async def test_rate_limits_are_retried_by_the_sdk_and_reported_after_the_last_retry() -> None:
    limited = Turn.error(429, "Rate limit reached for requests", retry_after=0.001)
    error, scripted = await failure([limited, limited, limited], max_retries=2)
    assert len(scripted.requests) == 3
    assert error.status == 429
    assert "still after 2 retries" in str(error)
    assert "quota" in str(error)


async def test_a_status_error_keeps_its_code_and_headers() -> None:
    limited = Turn.error(429, "Rate limit reached", code="rate_limit_exceeded", retry_after=2.5)
    error, _ = await failure([limited])
    assert (error.status, error.code, error.retry_after) == (429, "rate_limit_exceeded", 2.5)
    assert error.headers["retry-after-ms"] == "2500"
    assert "content-type" in error.headers  # every response header, by its lower-case name


async def test_a_retry_that_succeeds_is_invisible() -> None:
    limited = Turn.error(429, "slow down", retry_after=0.001)
    async with ScriptedModelServer([limited, Turn.text("42")]) as scripted:
        model = OpenAIChatModel("m", provider="vllm", base_url=scripted.base_url, max_retries=1)
        assert await run(model) == "42"


async def test_a_refused_connection_asks_whether_the_server_runs(unused_port: int) -> None:
    model = OpenAIChatModel(
        "qwen3", provider="ollama", base_url=f"http://127.0.0.1:{unused_port}/v1", max_retries=0
    )
    with pytest.raises(ModelError) as raised:
        await run(model)
    message = str(raised.value)
    assert f"cannot connect to http://127.0.0.1:{unused_port}/v1" in message
    assert "Is the server at base_url running" in message
    assert "ollama serve" in message
    assert raised.value.status is None


async def test_a_server_that_does_not_answer_in_time_is_a_timeout_error() -> None:
    slow = Turn.text("late", delay=5.0)  # the server would take 5 s for its first chunk
    async with ScriptedModelServer([slow]) as scripted:
        model = OpenAIChatModel("m", provider="vllm", base_url=scripted.base_url, timeout=0.2, max_retries=0)
        with pytest.raises(ModelError, match="did not answer in time"):
            await run(model)


async def test_an_error_inside_the_stream_ends_it_with_a_model_error() -> None:
    turn = Turn.text("Partial ").then_stream_error("The server had an error while processing your request.")
    error, _ = await failure([turn])
    assert "broke off with an error" in str(error)
    assert "The server had an error" in str(error)


async def test_an_event_that_is_not_json_ends_the_stream_with_a_model_error(
    raw_chat_server: Callable[..., RawChatServer],
) -> None:
    server = raw_chat_server([chunk({"content": "Partial "}), b"data: {not json\n\n"])
    model = OpenAIChatModel("m", provider="vllm", base_url=server.base_url, max_retries=0)
    with pytest.raises(ModelError, match=r"broke off with an error.*not JSON"):
        await run(model)


async def test_lm_studios_string_error_body_is_read(raw_chat_server: Callable[..., RawChatServer]) -> None:
    server = raw_chat_server([chunk({})], status=400, error={"error": "Model does not support tools."})
    model = OpenAIChatModel("m", provider="lmstudio", base_url=server.base_url, max_retries=0)
    with pytest.raises(ToolsNotSupportedError, match="Model does not support tools"):
        await run(model)
