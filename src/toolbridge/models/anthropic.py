"""Anthropic's Messages API, through the `anthropic` SDK.

The system prompt goes in its own field; calls are `tool_use` blocks and results `tool_result` blocks in
the next user message; thinking deltas become reasoning. As with the OpenAI adapter, usage and then
`Finish` come last, and leaving the context closes the HTTP response.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message as AnthropicMessage
from anthropic.types import RawMessageStreamEvent

from toolbridge.errors import ConfigError, ModelError
from toolbridge.models._attachments import user_parts
from toolbridge.models._common import HttpModel, first_set, provider_of
from toolbridge.models._errors import connection_error, cut_off_error, status_error, stream_error
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
from toolbridge.models.provider_profiles import PROFILES, ProviderProfile
from toolbridge.prompting import transform_schema
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

__all__ = ["AnthropicModel"]

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_EMPTY_RESULT = "(the tool returned nothing)"


class AnthropicModel(HttpModel[anthropic.AsyncAnthropic, "anthropic.AsyncStream[RawMessageStreamEvent]"]):
    """A Claude model. `provider` is a `Provider`, or the endpoint given here (`base_url`, `api_key`
    defaulting to `$ANTHROPIC_API_KEY`, ...); `settings` are request defaults."""

    sdk_error = anthropic.AnthropicError

    def __init__(
        self,
        model_id: str,
        *,
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
        profile: ProviderProfile | None = None,
        provider: Provider | None = None,
    ) -> None:
        name = name or f"anthropic:{model_id}"
        provider = provider_of(
            provider or profile or PROFILES["anthropic"],
            name,
            base_url=base_url,
            api_key=api_key,
            api_key_from=api_key_from,
            headers=headers,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )
        if provider.profile.wire != "anthropic":
            raise ConfigError(f"{provider.profile.name!r} does not speak the Anthropic API", key="provider")
        super().__init__(model_id, provider=provider, name=name, tool_mode=tool_mode, settings=settings)
        self._message_json = WireCache(self._convert_message)
        self._tool_json = WireCache(_tool_definition)

    def request_json(self, request: ModelRequest) -> bytes:
        system, messages = self._messages_json(request.messages)
        max_tokens = first_set(
            request.settings.max_tokens, self.settings.max_tokens, self.profile.default_max_tokens
        )
        options: dict[str, Any] = {"model": self.model_id, "stream": True, "max_tokens": max_tokens}
        if system:
            options["system"] = system
        temperature = first_set(request.settings.temperature, self.settings.temperature)
        if temperature is not None and self.profile.sends_temperature:
            options["temperature"] = temperature
        settings = request.settings
        if settings.top_p is not None and self.profile.sends_temperature:
            options["top_p"] = settings.top_p
        if settings.stop:
            options["stop_sequences"] = list(settings.stop)
        if settings.user is not None:
            options["metadata"] = {"user_id": settings.user}
        # `seed` and `response_format` have no counterpart in the Messages API.
        tools = [self._tool_json(tool) for tool in request.tools]
        if tools and (choice := _tool_choice(settings)) is not None:
            options["tool_choice"] = choice
        return join_body(messages, tools, options)

    def _messages_json(self, messages: Sequence[Message]) -> tuple[str, list[bytes]]:
        """The system prompt and the encoded `messages`. Consecutive same-role messages are merged, so
        all results of one reply travel in the one user message that must follow its `tool_use` blocks."""
        system: list[str] = []
        wire: list[bytes] = []
        run: list[_WireTurn] = []  # consecutive messages of one role
        for message in messages:
            if isinstance(message, SystemMessage):
                system.append(message.content)
                continue
            turn = self._message_json(message)
            if not turn.blocks:
                continue
            if run and run[0].role != turn.role:
                wire.append(_merged(run))
                run = []
            run.append(turn)
        if run:
            wire.append(_merged(run))
        return "\n\n".join(system), wire

    def _convert_message(self, message: Message) -> _WireTurn:
        return _wire_turn(message, self.profile)

    def _new_client(self) -> anthropic.AsyncAnthropic:
        provider = self.provider
        return anthropic.AsyncAnthropic(
            api_key=provider.api_key,
            base_url=provider.base_url,
            max_retries=provider.max_retries,
            timeout=provider.timeout if provider.timeout is not None else anthropic.NOT_GIVEN,
            default_headers=provider.headers or None,
            http_client=provider.http_client
            or own_http_client(anthropic.DEFAULT_TIMEOUT, anthropic.DEFAULT_CONNECTION_LIMITS),
        )

    async def _send(
        self, client: anthropic.AsyncAnthropic, body: bytes
    ) -> anthropic.AsyncStream[RawMessageStreamEvent]:
        # Sent as built (each message converted once), with the SDK's retries, errors and parsing.
        return await client.post(
            "/v1/messages",
            cast_to=AnthropicMessage,
            content=body,
            stream=True,
            stream_cls=anthropic.AsyncStream[RawMessageStreamEvent],
        )

    async def _events(
        self, stream: anthropic.AsyncStream[RawMessageStreamEvent], sent_tools: bool
    ) -> AsyncGenerator[ModelEvent]:
        input_tokens = output_tokens = 0
        stop_reason: str | None = None
        call_index_of_block: dict[int, int] = {}
        blocks_with_input: set[int] = set()
        try:
            async for event in stream:
                if event.type == "message_start":
                    usage = event.message.usage
                    input_tokens = (
                        usage.input_tokens
                        + (usage.cache_creation_input_tokens or 0)
                        + (usage.cache_read_input_tokens or 0)
                    )
                    output_tokens = usage.output_tokens
                elif event.type == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        index = call_index_of_block[event.index] = len(call_index_of_block)
                        yield ToolCallDelta(index=index, id=block.id, name=block.name)
                    elif block.type == "text" and block.text:
                        yield TextDelta(block.text)
                elif event.type == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta" and delta.text:
                        yield TextDelta(delta.text)
                    elif delta.type == "thinking_delta" and delta.thinking:
                        yield ReasoningDelta(delta.thinking)
                    elif delta.type == "input_json_delta" and event.index in call_index_of_block:
                        blocks_with_input.add(event.index)
                        yield ToolCallDelta(
                            index=call_index_of_block[event.index], arguments=delta.partial_json
                        )
                elif event.type == "content_block_stop":
                    if event.index in call_index_of_block and event.index not in blocks_with_input:
                        # A call without parameters streams no input at all: say "no arguments" explicitly.
                        yield ToolCallDelta(index=call_index_of_block[event.index], arguments="{}")
                elif event.type == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    output_tokens = event.usage.output_tokens
        except anthropic.AnthropicError as error:
            raise self._model_error(error, sent_tools) from error
        except httpx2.TimeoutException as error:  # the SDK's stream lets its HTTP client's errors through
            raise connection_error(self._endpoint, error, timed_out=True) from error
        except httpx2.RequestError as error:
            what = f"the connection was lost before the reply ended ({error or type(error).__name__})"
            raise cut_off_error(self._endpoint, what) from error
        if stop_reason is None:
            raise cut_off_error(self._endpoint, "the stream ended without a stop_reason")
        yield UsageReport(Usage(input_tokens=input_tokens, output_tokens=output_tokens))
        yield Finish(_STOP_REASONS.get(stop_reason, stop_reason))

    def _model_error(self, error: anthropic.AnthropicError, sent_tools: bool) -> ModelError:
        if isinstance(error, anthropic.APIStatusError):
            if error.status_code < 400:  # an `error` event inside a stream that began with 200
                return stream_error(self._endpoint, error.body)
            return status_error(
                self._endpoint,
                error.status_code,
                error.body,
                sent_tools=sent_tools,
                headers=error.response.headers,
            )
        if isinstance(error, anthropic.APIConnectionError):
            timed_out = isinstance(error, anthropic.APITimeoutError)
            return connection_error(self._endpoint, error, timed_out=timed_out)
        if isinstance(error, anthropic.APIError):
            return stream_error(self._endpoint, error.body if error.body is not None else error.message)
        return ModelError(f"{self.name}: {error}", model=self.name)


def _tool_choice(settings: ModelSettings) -> dict[str, Any] | None:
    choice = settings.tool_choice
    if choice == "required":
        wire: dict[str, Any] = {"type": "any"}
    elif isinstance(choice, NamedTool):
        wire = {"type": "tool", "name": choice.name}
    elif settings.parallel_tool_calls is False:
        wire = {"type": "auto"}
    else:
        return None
    if settings.parallel_tool_calls is False:
        wire["disable_parallel_tool_use"] = True
    return wire


# -- neutral messages -> wire ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _WireTurn:
    """One message's content blocks, encoded, and the message on its own (the common case)."""

    role: str
    blocks: tuple[bytes, ...]

    @cached_property
    def alone(self) -> bytes:
        return b"".join([b'{"role":"', self.role.encode(), b'","content":[', b",".join(self.blocks), b"]}"])


def _merged(run: list[_WireTurn]) -> bytes:
    if len(run) == 1:
        return run[0].alone
    merged = _WireTurn(run[0].role, tuple(block for turn in run for block in turn.blocks))
    return merged.alone


def _wire_turn(message: Message, profile: ProviderProfile) -> _WireTurn:
    """A message's role and its content blocks, encoded (not for system messages: those go apart)."""
    if isinstance(message, UserMessage) and message.attachments:
        parts = user_parts(message, takes_images=profile.tool_result_images)
        return _WireTurn("user", tuple(encode(_content_block(part)) for part in parts))
    if isinstance(message, UserMessage):
        return _WireTurn("user", (encode({"type": "text", "text": message.content}),))
    if isinstance(message, AssistantMessage):
        # Reasoning is not sent back: Claude only accepts thinking blocks with the signature it made,
        # which our neutral message does not keep.
        blocks: list[dict[str, Any]] = []
        if message.content:
            blocks.append({"type": "text", "text": message.content})
        blocks += [
            {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
            for call in message.tool_calls
        ]
        return _WireTurn("assistant", tuple(encode(block) for block in blocks))
    assert isinstance(message, ToolMessage), "system messages are gathered apart"
    return _WireTurn("user", (encode(_tool_result(message.result, profile)),))


def _content_block(part: TextPart | ImagePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if part.mime_type not in _IMAGE_TYPES:
        return {"type": "text", "text": f"[an image of type {part.mime_type}, which Claude does not take]"}
    return {"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}}


def _tool_result(result: ToolResult, profile: ProviderProfile) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": result.text or _EMPTY_RESULT}]
    if profile.tool_result_images:
        content += [
            {"type": "image", "source": {"type": "base64", "media_type": part.mime_type, "data": part.data}}
            for part in result.content
            if isinstance(part, ImagePart) and part.mime_type in _IMAGE_TYPES
        ]
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": result.call_id, "content": content}
    if result.is_error:
        block["is_error"] = True
    return block


def _tool_definition(tool: ToolSpec) -> bytes:
    definition: dict[str, Any] = {
        "name": tool.name,
        "input_schema": transform_schema(tool.input_schema, "anthropic"),
    }
    if tool.description:
        definition["description"] = tool.description
    return encode(definition)
