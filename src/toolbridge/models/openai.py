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
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion

from toolbridge.errors import ConfigError, ModelError
from toolbridge.models._attachments import user_parts
from toolbridge.models._common import HttpModel, first_set, provider_of
from toolbridge.models._errors import connection_error, cut_off_error, status_error, stream_error
from toolbridge.models._openai_stream import ChunkStream, ReplyCutOff
from toolbridge.models._retry_wait import own_http_client
from toolbridge.models._wire_cache import WireCache, encode, join_body
from toolbridge.models.base import (
    Finish,
    ModelEvent,
    ModelRequest,
    ModelSettings,
    NamedTool,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from toolbridge.models.provider import Provider
from toolbridge.models.provider_profiles import ProviderProfile, find_profile
from toolbridge.prompting import openai_tool_definitions
from toolbridge.types import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolMessage,
    ToolModeSetting,
    ToolResult,
    ToolSpec,
    Usage,
    UserMessage,
)

__all__ = ["OpenAIChatModel"]

_EMPTY_RESULT = "(the tool returned nothing)"


class OpenAIChatModel(HttpModel[openai.AsyncOpenAI, ChunkStream]):
    """A model behind an OpenAI-compatible chat-completions endpoint.

    `provider` is a `Provider`, or a provider name or profile with the endpoint given here (`base_url`,
    `api_key`, ...). `api_key` defaults to the profile's environment variable; local servers need none.
    `settings` are defaults that a request's own settings override. `tool_mode` says how an agent gives
    it tools (see `toolbridge.models.tool_calling`).
    """

    sdk_error = openai.OpenAIError

    def __init__(
        self,
        model_id: str,
        *,
        provider: str | ProviderProfile | Provider = "openai",
        name: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_from: str | None = None,
        tool_mode: ToolModeSetting = "auto",
        settings: ModelSettings | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        if isinstance(provider, str):
            provider = _profile(provider)
        profile = provider.profile if isinstance(provider, Provider) else provider
        name = name or f"{profile.name}:{model_id}"
        provider = provider_of(
            provider,
            name,
            base_url=base_url,
            api_key=api_key,
            api_key_from=api_key_from,
            headers=headers,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )
        if provider.profile.wire != "openai":
            raise ConfigError(
                f"{provider.profile.name!r} is not an OpenAI-compatible provider", key="provider"
            )
        super().__init__(model_id, provider=provider, name=name, tool_mode=tool_mode, settings=settings)
        self._message_json = WireCache(self._convert_message)
        self._tool_json = WireCache(self._convert_tool)

    # -- the request ------------------------------------------------------------------------------

    def request_json(self, request: ModelRequest) -> bytes:
        options: dict[str, Any] = {"model": self.model_id, "stream": True}
        if self.profile.streams_usage:
            options["stream_options"] = {"include_usage": True}
        temperature = first_set(request.settings.temperature, self.settings.temperature)
        if temperature is not None and self.profile.sends_temperature:
            options["temperature"] = temperature
        max_tokens = first_set(
            request.settings.max_tokens, self.settings.max_tokens, self.profile.default_max_tokens
        )
        if max_tokens is not None:
            options[self.profile.max_tokens_param] = max_tokens
        tools = [self._tool_json(tool) for tool in request.tools]
        options.update(_request_options(request.settings, sends_sampling=self.profile.sends_temperature))
        if tools:
            options.update(_tool_options(request.settings))
        return join_body(self._messages_json(request.messages), tools, options)

    def _messages_json(self, messages: Sequence[Message]) -> list[bytes]:
        wire: list[bytes] = []
        pending_images: list[bytes] = []
        for message in messages:
            converted = self._message_json(message)
            if not isinstance(message, ToolMessage) and pending_images:
                wire.append(_images_message(pending_images))
                pending_images = []
            wire.append(converted.message)
            pending_images += converted.images
        if pending_images:
            wire.append(_images_message(pending_images))
        return wire

    def _convert_message(self, message: Message) -> _WireMessage:
        return _wire_message(message, self.profile)

    def _convert_tool(self, tool: ToolSpec) -> bytes:
        [definition] = openai_tool_definitions([tool], strict=self.profile.schema_target == "openai_strict")
        return encode(definition)

    def _new_client(self) -> openai.AsyncOpenAI:
        provider = self.provider
        return openai.AsyncOpenAI(
            api_key=provider.api_key,
            base_url=provider.base_url,
            max_retries=provider.max_retries,
            timeout=provider.timeout if provider.timeout is not None else openai.NOT_GIVEN,
            default_headers=provider.headers or None,
            http_client=provider.http_client
            or own_http_client(openai.DEFAULT_TIMEOUT, openai.DEFAULT_CONNECTION_LIMITS),
        )

    async def _send(self, client: openai.AsyncOpenAI, body: bytes) -> ChunkStream:
        # The SDK's `chat.completions.create` walks every message of the body through its type
        # transform on every request; the body is sent as built, with the SDK's retries and errors.
        # Its chunks stay the JSON they came as (`object`): building a typed `ChatCompletionChunk` per
        # chunk cost more CPU than all the rest of reading it; `ChunkStream` reads them.
        return await client.post(
            "/chat/completions", cast_to=ChatCompletion, content=body, stream=True, stream_cls=ChunkStream
        )

    # -- the reply --------------------------------------------------------------------------------

    async def _events(self, chunks: ChunkStream, sent_tools: bool) -> AsyncGenerator[ModelEvent]:
        finish_reason: str | None = None
        usage: Usage | None = None
        calls_named: dict[int, tuple[str | None, str | None]] = {}
        try:
            async for chunk in chunks:
                if not isinstance(chunk, dict):
                    continue  # not a chunk at all: nothing in it to read
                usage = _usage(chunk.get("usage")) or usage
                for choice in _dicts(chunk.get("choices"))[:1]:  # we never ask for n > 1
                    delta = choice.get("delta")
                    if isinstance(delta, dict):
                        if reasoning := self._reasoning(delta):
                            yield ReasoningDelta(reasoning)
                        if (content := delta.get("content")) and isinstance(content, str):
                            yield TextDelta(content)
                        for call in _dicts(delta.get("tool_calls")):
                            yield _call_delta(call, calls_named)
                    usage = _usage(choice.get("usage")) or usage  # Moonshot puts it here
                    finish_reason = _text(choice.get("finish_reason")) or finish_reason
        except openai.OpenAIError as error:
            raise self._model_error(error, sent_tools) from error
        if finish_reason is None and not chunks.done:
            raise cut_off_error(self._endpoint, "the stream ended with neither a finish_reason nor [DONE]")
        if usage is not None:
            yield UsageReport(usage)
        if finish_reason is not None:
            if finish_reason == "stop" and calls_named:
                finish_reason = "tool_calls"  # some servers (older Ollama) say stop after calls
            yield Finish(finish_reason)

    def _reasoning(self, delta: dict[str, Any]) -> str:
        for field in self.profile.reasoning_fields:
            value = delta.get(field)
            if isinstance(value, str) and value:
                return value
        return ""

    def _model_error(self, error: openai.OpenAIError, sent_tools: bool) -> ModelError:
        if isinstance(error, openai.APIStatusError):
            return status_error(
                self._endpoint,
                error.status_code,
                error.body,
                sent_tools=sent_tools,
                headers=error.response.headers,
            )
        if isinstance(error, ReplyCutOff):
            return cut_off_error(self._endpoint, error.message)
        if isinstance(error, openai.APIConnectionError):
            timed_out = isinstance(error, openai.APITimeoutError)
            return connection_error(self._endpoint, error, timed_out=timed_out)
        if isinstance(error, openai.APIError):
            return stream_error(self._endpoint, error.body if error.body is not None else error.message)
        return ModelError(f"{self.name}: {error}", model=self.name)


def _request_options(settings: ModelSettings, *, sends_sampling: bool) -> dict[str, Any]:
    """What a client asked of this one request (the pass-through endpoint) beyond the model's defaults."""
    options: dict[str, Any] = {}
    if settings.top_p is not None and sends_sampling:
        options["top_p"] = settings.top_p
    if settings.stop:
        options["stop"] = list(settings.stop)
    if settings.seed is not None:
        options["seed"] = settings.seed
    if settings.user is not None:
        options["user"] = settings.user
    if settings.response_format is not None:
        options["response_format"] = settings.response_format
    return options


def _tool_options(settings: ModelSettings) -> dict[str, Any]:
    options: dict[str, Any] = {}
    choice = settings.tool_choice
    if choice == "required":
        options["tool_choice"] = "required"
    elif isinstance(choice, NamedTool):
        options["tool_choice"] = {"type": "function", "function": {"name": choice.name}}
    if settings.parallel_tool_calls is not None:
        options["parallel_tool_calls"] = settings.parallel_tool_calls
    return options


# -- neutral messages -> wire ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _WireMessage:
    message: bytes
    """The chat-completions message, encoded."""
    images: tuple[bytes, ...] = ()
    """Image parts of a tool result, sent in a user message after the tool messages (encoded)."""


def _wire_message(message: Message, profile: ProviderProfile) -> _WireMessage:
    if isinstance(message, UserMessage) and message.attachments:
        parts = user_parts(message, takes_images=profile.tool_result_images)
        return _WireMessage(encode({"role": "user", "content": [_content_part(part) for part in parts]}))
    if isinstance(message, SystemMessage | UserMessage):
        return _WireMessage(encode({"role": message.role, "content": message.content}))
    if isinstance(message, AssistantMessage):
        return _WireMessage(encode(_assistant_message(message, profile)))
    tool_message = {
        "role": "tool",
        "tool_call_id": message.result.call_id,
        "content": _result_text(message.result),
    }
    images: tuple[bytes, ...] = ()
    if profile.tool_result_images:
        images = tuple(
            encode({"type": "image_url", "image_url": {"url": f"data:{part.mime_type};base64,{part.data}"}})
            for part in message.result.content
            if isinstance(part, ImagePart)
        )
    return _WireMessage(encode(tool_message), images)


def _content_part(part: TextPart | ImagePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    return {"type": "image_url", "image_url": {"url": f"data:{part.mime_type};base64,{part.data}"}}


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


_IMAGES_INTRO = encode({"type": "text", "text": "Images returned by the tool calls above:"})


def _images_message(images: list[bytes]) -> bytes:
    # Tool messages hold text only; images a tool returned follow in a user message.
    return b"".join([b'{"role":"user","content":[', _IMAGES_INTRO, b",", b",".join(images), b"]}"])


# -- wire -> events --------------------------------------------------------------------------------------


def _dicts(value: object) -> list[dict[str, Any]]:
    """The objects of a JSON array (a server's null or junk in its place reads as none)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _call_delta(call: dict[str, Any], calls_named: dict[int, tuple[str | None, str | None]]) -> ToolCallDelta:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    name, call_id, index = _text(function.get("name")), _text(call.get("id")), call.get("index")
    index = index if isinstance(index, int) else 0
    arguments = function.get("arguments")
    # Some servers (Ollama's older API) send the arguments as an object rather than its JSON text.
    arguments = json.dumps(arguments, ensure_ascii=False) if isinstance(arguments, dict) else _text(arguments)
    known_id, known_name = calls_named.get(index, (None, None))
    # Some servers repeat the id and name in every piece; pass each on once so readers can append.
    new_id = call_id if call_id and call_id != known_id else None
    new_name = name if name and name != known_name else None
    calls_named[index] = (call_id or known_id, name or known_name)
    return ToolCallDelta(index=index, id=new_id, name=new_name, arguments=arguments)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


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
