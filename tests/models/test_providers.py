"""Providers and the HTTP base both adapters share, over real HTTP to the scripted OpenAI and Anthropic APIs.

- a `Provider` carries the endpoint, and the user's own `httpx2.AsyncClient` when given one;
- models stream under any anyio backend (asyncio, trio), on successive event loops;
- each message is converted to its wire form once, however many requests send it again.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import httpx
import httpx2
import pytest

from toolbridge.errors import ConfigError
from toolbridge.models import (
    AnthropicModel,
    Model,
    ModelRequest,
    OpenAIChatModel,
    Provider,
    TextDelta,
)
from toolbridge.models._wire_cache import WireCache
from toolbridge.testing import ScriptedAnthropicServer, ScriptedModelServer, ToolCallSpec, Turn
from toolbridge.types import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
)

pytestmark = pytest.mark.anyio

Adapter = Literal["openai", "anthropic"]
ADAPTERS: list[Adapter] = ["openai", "anthropic"]


@asynccontextmanager
async def scripted(adapter: Adapter, turns: list[Turn]) -> AsyncIterator[ScriptedModelServer]:
    server = ScriptedAnthropicServer(turns) if adapter == "anthropic" else ScriptedModelServer(turns)
    async with server:
        yield server


def model_for(adapter: Adapter, provider: Provider) -> Model:
    if adapter == "anthropic":
        return AnthropicModel("claude-test", provider=provider)
    return OpenAIChatModel("gpt-test", provider=provider)


def provider_for(adapter: Adapter, server: ScriptedModelServer, **options: object) -> Provider:
    options.setdefault("max_retries", 0)
    profile = "anthropic" if adapter == "anthropic" else "openai"
    return Provider(profile, base_url=server.base_url, api_key="sk-test", **options)  # type: ignore[arg-type]


async def reply_text(model: Model, messages: list[Message]) -> str:
    async with model.stream(ModelRequest(messages=messages)) as events:
        return "".join([event.text async for event in events if isinstance(event, TextDelta)])


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_a_model_reaches_its_provider_through_the_users_own_http_client(adapter: Adapter) -> None:
    sent: list[str] = []

    async def record(request: httpx2.Request) -> None:
        sent.append(f"{request.method} {request.url.path} {request.headers['content-type']}")

    async with (
        httpx2.AsyncClient(event_hooks={"request": [record]}) as client,
        scripted(adapter, [Turn.text("one"), Turn.text("two")]) as server,
    ):
        model = model_for(adapter, provider_for(adapter, server, http_client=client))
        assert await reply_text(model, [UserMessage(content="hi")]) == "one"
        await model.aclose()
        # The client is the user's: still open, and the model keeps using it.
        assert not client.is_closed
        assert await reply_text(model, [UserMessage(content="again")]) == "two"
    path = "/v1/messages" if adapter == "anthropic" else "/v1/chat/completions"
    assert sent == [f"POST {path} application/json"] * 2


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_models_stream_under_any_anyio_backend(adapter: Adapter, anyio_backend: str) -> None:
    async with scripted(adapter, [Turn.text("first"), Turn.text("second")]) as server:
        model = model_for(adapter, provider_for(adapter, server))
        assert await reply_text(model, [UserMessage(content="hi")]) == "first"
        assert await reply_text(model, [UserMessage(content="hi")]) == "second"  # the loop's client again
        await model.aclose()


def test_a_model_gets_a_fresh_client_on_each_event_loop() -> None:
    import anyio

    with ScriptedModelServer([Turn.text("on asyncio"), Turn.text("on trio")]) as server:
        model = OpenAIChatModel("gpt-test", provider=provider_for("openai", server))

        async def ask() -> str:
            try:
                return await reply_text(model, [UserMessage(content="hi")])
            finally:
                await model.aclose()

        assert anyio.run(ask) == "on asyncio"
        assert anyio.run(ask, backend="trio") == "on trio"


def counted_result(call_id: str, reads: list[str]) -> ToolResult:
    """A tool result that notes each time an adapter reads its text to convert it."""

    class CountingResult(ToolResult):
        @property
        def text(self) -> str:
            reads.append(call_id)
            return super().text

    return CountingResult(call_id=call_id, content=[TextPart(text="42")])


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_each_message_is_converted_once_however_many_requests_send_it(adapter: Adapter) -> None:
    reads: list[str] = []
    messages: list[Message] = [UserMessage(content="Add things up.")]
    steps = 3
    turns = [Turn.tool_calls(ToolCallSpec("add", {"n": n})) for n in range(steps)]
    async with scripted(adapter, turns) as server:
        model = model_for(adapter, provider_for(adapter, server))
        for step in range(steps):
            call = ToolCall(name="add", arguments={"n": step}, id=f"call_{step}")
            messages += [
                AssistantMessage(tool_calls=[call]),
                ToolMessage(name="add", result=counted_result(call.id, reads)),
            ]
            async with model.stream(ModelRequest(messages=messages)) as events:
                async for _ in events:
                    pass
        await model.aclose()
        # Every request carried every result so far...
        assert [len(request.messages) for request in server.requests] == [3, 5, 7]
    # ...but each was converted only when it was new.
    assert reads == ["call_0", "call_1", "call_2"]


def test_the_wire_cache_forgets_what_is_gone() -> None:
    converted: list[str] = []

    def convert(message: UserMessage) -> bytes:
        converted.append(message.content)
        return message.content.encode()

    cache = WireCache(convert)
    kept, dropped = UserMessage(content="kept"), UserMessage(content="dropped")
    assert (cache(kept), cache(dropped), cache(kept)) == (b"kept", b"dropped", b"kept")
    del dropped
    gc.collect()
    assert len(cache) == 1
    assert cache(UserMessage(content="kept")) == b"kept"  # an equal but new message: converted anew
    assert converted == ["kept", "dropped", "kept"]


def test_the_key_stays_out_of_reprs() -> None:
    provider = Provider("deepseek", api_key="sk-secret-123")
    model = OpenAIChatModel("deepseek-chat", provider=provider)
    assert "sk-secret-123" not in repr(provider) + repr(model)
    assert provider.api_key == "sk-secret-123"
    assert provider.api_key_from == "the configured api_key"


def test_a_provider_of_the_other_wire_is_refused() -> None:
    with pytest.raises(ConfigError, match="'anthropic' is not an OpenAI-compatible provider"):
        OpenAIChatModel("gpt-test", provider=Provider("anthropic", api_key="k"))
    with pytest.raises(ConfigError, match="'openai' does not speak the Anthropic API"):
        AnthropicModel("claude-test", provider=Provider("openai", api_key="k"))


def test_a_provider_without_its_key_says_which_variable() -> None:
    with pytest.raises(ConfigError, match=r"provider 'moonshot' needs an API key: .* the MOONSHOT_API_KEY"):
        Provider("moonshot")


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_the_sdks_retries_still_apply_to_the_body_we_build(adapter: Adapter) -> None:
    limited = Turn.error(429, "Rate limit reached", retry_after=0.001)
    async with scripted(adapter, [limited, Turn.text("after a retry")]) as server:
        model = model_for(adapter, provider_for(adapter, server, max_retries=1))
        assert await reply_text(model, [UserMessage(content="hi")]) == "after a retry"
        await model.aclose()
        first, retried = server.requests
        assert first.body == retried.body


def test_endpoint_settings_beside_a_provider_are_refused_not_ignored() -> None:
    provider = Provider("vllm", base_url="http://127.0.0.1:8000/v1")
    with pytest.raises(ConfigError, match="base_url, max_retries belong to the Provider it was given"):
        OpenAIChatModel("qwen3", provider=provider, base_url="http://elsewhere/v1", max_retries=5)


async def test_an_http_client_the_sdks_cannot_use_is_refused_at_once() -> None:
    async with httpx.AsyncClient() as legacy:
        with pytest.raises(ConfigError, match=r"http_client must be an httpx2.AsyncClient .* not httpx\."):
            Provider("anthropic", api_key="k", http_client=legacy)  # type: ignore[arg-type]
