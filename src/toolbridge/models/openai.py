"""OpenAI-compatible chat completions, through the `openai` SDK.

One adapter for every server that speaks `/chat/completions`: OpenAI, DeepSeek, Qwen (DashScope),
Moonshot, Ollama, vLLM, LM Studio, llama.cpp's server. How they differ is data in their
`ProviderProfile`, not branches here.

The stream yields reasoning, text and tool-call deltas as they arrive; usage, then `Finish`, come last
(the finish reason is held back until the stream ends, so a reader that stops at `Finish` has the
usage too). Leaving the context closes the HTTP response, also mid-stream.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import openai
from openai.types.chat import ChatCompletionChunk

from toolbridge.errors import ConfigError, ModelError
from toolbridge.models._common import HttpModel, first_set
from toolbridge.models._errors import connection_error, status_error, stream_error
from toolbridge.models.base import (
    Finish,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolMode,
    UsageReport,
)
from toolbridge.models.profiles import DEFAULT_MAX_RETRIES, ProviderProfile, find_profile
from toolbridge.prompting import openai_tool_definitions
from toolbridge.types import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    ToolMessage,
    ToolResult,
    Usage,
    UserMessage,
)

__all__ = ["DEFAULT_MAX_RETRIES", "OpenAIChatModel", "openai_messages"]

_EMPTY_RESULT = "(the tool returned nothing)"


class OpenAIChatModel(HttpModel[openai.AsyncOpenAI]):
    """A model behind an OpenAI-compatible chat-completions endpoint.

    `api_key` defaults to the profile's environment variable; local servers need none. `settings` are
    defaults that a request's own settings override. `tool_mode` says how an agent gives it tools (see
    `toolbridge.models.tool_calling`).
    """

    def __init__(
        self,
        model_id: str,
        *,
        provider: str | ProviderProfile = "openai",
        name: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_from: str | None = None,
        tool_mode: ToolMode = "auto",
        settings: ModelSettings | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        profile = provider if isinstance(provider, ProviderProfile) else _profile(provider)
        name = name or f"{profile.name}:{model_id}"
        resolved_url = base_url or profile.base_url
        if not resolved_url:
            raise ConfigError(
                f"model {name!r}: provider {profile.name!r} has no default address; "
                'set "base_url" (e.g. "http://127.0.0.1:8000/v1")',
                key="base_url",
            )
        super().__init__(
            model_id,
            profile=profile,
            name=name,
            base_url=resolved_url,
            api_key=api_key,
            api_key_from=api_key_from,
            tool_mode=tool_mode,
            settings=settings,
            max_retries=max_retries,
            timeout=timeout,
            headers=headers,
        )

    # -- the request ------------------------------------------------------------------------------

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for `request` (minus `model` and `stream`); useful to see what goes out."""
        body: dict[str, Any] = {"messages": openai_messages(request.messages, self.profile)}
        if self.profile.streams_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            strict = self.profile.schema_target == "openai_strict"
            body["tools"] = openai_tool_definitions(request.tools, strict=strict)
        temperature = first_set(request.settings.temperature, self.settings.temperature)
        if temperature is not None and self.profile.sends_temperature:
            body["temperature"] = temperature
        max_tokens = first_set(
            request.settings.max_tokens, self.settings.max_tokens, self.profile.default_max_tokens
        )
        if max_tokens is not None:
            body[self.profile.max_tokens_param] = max_tokens
        return body

    @asynccontextmanager
    async def _stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[ModelEvent]]:
        body = self.request_body(request)
        sent_tools = bool(request.tools)
        client = self._clients.get()
        try:
            chunks = cast(
                "openai.AsyncStream[ChatCompletionChunk]",
                await client.chat.completions.create(model=self.model_id, stream=True, **body),
            )
        except openai.OpenAIError as error:
            raise self._model_error(error, sent_tools) from error
        events = self._events(chunks, sent_tools)
        try:
            yield events
        finally:
            # Shielded: closing is what tells the server to stop generating, also when cancelled.
            with anyio.CancelScope(shield=True):
                await events.aclose()
                await chunks.close()

    def _new_client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=self._api_key.get_secret_value(),
            base_url=self.base_url,
            max_retries=self.max_retries,
            timeout=self.timeout if self.timeout is not None else openai.NOT_GIVEN,
            default_headers=self._headers or None,
        )

    # -- the reply --------------------------------------------------------------------------------

    async def _events(
        self, chunks: openai.AsyncStream[ChatCompletionChunk], sent_tools: bool
    ) -> AsyncGenerator[ModelEvent]:
        finish_reason: str | None = None
        usage: Usage | None = None
        calls_named: dict[int, tuple[str | None, str | None]] = {}
        try:
            async for chunk in chunks:
                usage = _usage(chunk.usage) or usage
                for choice in chunk.choices[:1]:  # we never ask for n > 1
                    delta = choice.delta
                    if reasoning := self._reasoning(delta):
                        yield ReasoningDelta(reasoning)
                    if delta.content:
                        yield TextDelta(delta.content)
                    for call in delta.tool_calls or ():
                        yield _call_delta(call, calls_named)
                    usage = _usage(getattr(choice, "usage", None)) or usage  # Moonshot puts it here
                    finish_reason = choice.finish_reason or finish_reason
        except openai.OpenAIError as error:
            raise self._model_error(error, sent_tools) from error
        if usage is not None:
            yield UsageReport(usage)
        if finish_reason is not None:
            if finish_reason == "stop" and calls_named:
                finish_reason = "tool_calls"  # some servers (older Ollama) say stop after calls
            yield Finish(finish_reason)

    def _reasoning(self, delta: object) -> str:
        for field in self.profile.reasoning_fields:
            value = getattr(delta, field, None)
            if isinstance(value, str) and value:
                return value
        return ""

    def _model_error(self, error: openai.OpenAIError, sent_tools: bool) -> ModelError:
        if isinstance(error, openai.APIStatusError):
            return status_error(self._endpoint, error.status_code, error.body, sent_tools=sent_tools)
        if isinstance(error, openai.APIConnectionError):
            timed_out = isinstance(error, openai.APITimeoutError)
            return connection_error(self._endpoint, error, timed_out=timed_out)
        if isinstance(error, openai.APIError):
            return stream_error(self._endpoint, error.body if error.body is not None else error.message)
        return ModelError(f"{self.name}: {error}", model=self.name)


# -- neutral messages -> wire ---------------------------------------------------------------------------


def openai_messages(messages: Sequence[Message], profile: ProviderProfile) -> list[dict[str, Any]]:
    """Our messages as chat-completions `messages`."""
    wire: list[dict[str, Any]] = []
    pending_images: list[ImagePart] = []
    for message in messages:
        if not isinstance(message, ToolMessage) and pending_images:
            wire.append(_images_message(pending_images))
            pending_images = []
        if isinstance(message, SystemMessage | UserMessage):
            wire.append({"role": message.role, "content": message.content})
        elif isinstance(message, AssistantMessage):
            wire.append(_assistant_message(message, profile))
        else:
            wire.append(
                {
                    "role": "tool",
                    "tool_call_id": message.result.call_id,
                    "content": _result_text(message.result),
                }
            )
            if profile.tool_result_images:
                pending_images += [part for part in message.result.content if isinstance(part, ImagePart)]
    if pending_images:
        wire.append(_images_message(pending_images))
    return wire


def _assistant_message(message: AssistantMessage, profile: ProviderProfile) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant", "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
            }
            for call in message.tool_calls
        ]
    if message.reasoning and profile.sends_reasoning_back:
        wire["reasoning_content"] = message.reasoning
    return wire


def _result_text(result: ToolResult) -> str:
    # `ToolResult.text` describes images and audio in words; some servers reject an empty tool message.
    text = result.text or _EMPTY_RESULT
    return f"Error: {text}" if result.is_error else text


def _images_message(images: list[ImagePart]) -> dict[str, Any]:
    # Tool messages hold text only; images a tool returned follow in a user message.
    parts: list[dict[str, Any]] = [{"type": "text", "text": "Images returned by the tool calls above:"}]
    for image in images:
        url = f"data:{image.mime_type};base64,{image.data}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return {"role": "user", "content": parts}


# -- wire -> events --------------------------------------------------------------------------------------


def _call_delta(call: Any, calls_named: dict[int, tuple[str | None, str | None]]) -> ToolCallDelta:
    function = call.function
    name = function.name if function is not None else None
    arguments = (function.arguments if function is not None else None) or ""
    known_id, known_name = calls_named.get(call.index, (None, None))
    # Some servers repeat the id and name in every piece; pass each on once so readers can append.
    new_id = call.id if call.id and call.id != known_id else None
    new_name = name if name and name != known_name else None
    calls_named[call.index] = (call.id or known_id, name or known_name)
    return ToolCallDelta(index=call.index, id=new_id, name=new_name, arguments=arguments)


def _usage(value: object) -> Usage | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        prompt, completion = value.get("prompt_tokens"), value.get("completion_tokens")
    else:
        prompt, completion = getattr(value, "prompt_tokens", None), getattr(value, "completion_tokens", None)
    if not isinstance(prompt, int) and not isinstance(completion, int):
        return None
    return Usage(input_tokens=prompt or 0, output_tokens=completion or 0)


def _profile(provider: str) -> ProviderProfile:
    profile = find_profile(provider)
    if profile is None or profile.wire != "openai":
        raise ConfigError(f"{provider!r} is not an OpenAI-compatible provider", key="provider")
    return profile
