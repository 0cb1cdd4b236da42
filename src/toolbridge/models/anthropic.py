"""Anthropic's Messages API, through the `anthropic` SDK.

The system prompt goes in its own field; calls are `tool_use` blocks and results `tool_result` blocks in
the next user message; thinking deltas become reasoning. As with the OpenAI adapter, usage and then
`Finish` come last, and leaving the context closes the HTTP response.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

import anthropic
import anyio
from anthropic.types import RawMessageStreamEvent

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
from toolbridge.models.profiles import DEFAULT_MAX_RETRIES, PROFILES, ProviderProfile
from toolbridge.prompting import transform_schema
from toolbridge.types import (
    AssistantMessage,
    ImagePart,
    Message,
    SystemMessage,
    ToolMessage,
    ToolResult,
    ToolSpec,
    Usage,
    UserMessage,
)

__all__ = ["AnthropicModel", "anthropic_messages"]

_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}
_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_EMPTY_RESULT = "(the tool returned nothing)"


class AnthropicModel(HttpModel[anthropic.AsyncAnthropic]):
    """A Claude model. `api_key` defaults to `$ANTHROPIC_API_KEY`; `settings` are request defaults."""

    def __init__(
        self,
        model_id: str,
        *,
        name: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_from: str | None = None,
        tool_mode: ToolMode = "auto",
        settings: ModelSettings | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        timeout: float | None = None,
        headers: Mapping[str, str] | None = None,
        profile: ProviderProfile | None = None,
    ) -> None:
        profile = profile or PROFILES["anthropic"]
        if profile.wire != "anthropic":
            raise ConfigError(f"{profile.name!r} does not speak the Anthropic API", key="provider")
        super().__init__(
            model_id,
            profile=profile,
            name=name or f"anthropic:{model_id}",
            base_url=base_url or profile.base_url or "",
            api_key=api_key,
            api_key_from=api_key_from,
            tool_mode=tool_mode,
            settings=settings,
            max_retries=max_retries,
            timeout=timeout,
            headers=headers,
        )

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The JSON body sent for `request` (minus `model` and `stream`)."""
        system, messages = anthropic_messages(request.messages, self.profile)
        max_tokens = first_set(
            request.settings.max_tokens, self.settings.max_tokens, self.profile.default_max_tokens
        )
        body: dict[str, Any] = {"max_tokens": max_tokens, "messages": messages}
        if system:
            body["system"] = system
        if request.tools:
            body["tools"] = [_tool_definition(tool) for tool in request.tools]
        temperature = first_set(request.settings.temperature, self.settings.temperature)
        if temperature is not None and self.profile.sends_temperature:
            body["temperature"] = temperature
        return body

    @asynccontextmanager
    async def _stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[ModelEvent]]:
        body = self.request_body(request)
        sent_tools = bool(request.tools)
        client = self._clients.get()
        try:
            raw = await client.messages.create(model=self.model_id, stream=True, **body)
        except anthropic.AnthropicError as error:
            raise self._model_error(error, sent_tools) from error
        stream = cast("anthropic.AsyncStream[RawMessageStreamEvent]", raw)
        events = self._events(stream, sent_tools)
        try:
            yield events
        finally:
            with anyio.CancelScope(shield=True):  # closing is what stops the server generating
                await events.aclose()
                await stream.close()

    def _new_client(self) -> anthropic.AsyncAnthropic:
        return anthropic.AsyncAnthropic(
            api_key=self._api_key.get_secret_value(),
            base_url=self.base_url,
            max_retries=self.max_retries,
            timeout=self.timeout if self.timeout is not None else anthropic.NOT_GIVEN,
            default_headers=self._headers or None,
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
        yield UsageReport(Usage(input_tokens=input_tokens, output_tokens=output_tokens))
        if stop_reason is not None:
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


# -- neutral messages -> wire ---------------------------------------------------------------------------


def anthropic_messages(
    messages: Sequence[Message], profile: ProviderProfile
) -> tuple[str, list[dict[str, Any]]]:
    """The system prompt and the `messages` list. Consecutive same-role messages are merged, so all
    results of one reply travel in the one user message that must follow its `tool_use` blocks."""
    system: list[str] = []
    wire: list[dict[str, Any]] = []

    def append(role: str, blocks: list[dict[str, Any]]) -> None:
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        elif blocks:
            wire.append({"role": role, "content": blocks})

    for message in messages:
        if isinstance(message, SystemMessage):
            system.append(message.content)
        elif isinstance(message, UserMessage):
            append("user", [{"type": "text", "text": message.content}])
        elif isinstance(message, AssistantMessage):
            # Reasoning is not sent back: Claude only accepts thinking blocks with the signature it made,
            # which our neutral message does not keep.
            blocks: list[dict[str, Any]] = []
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            blocks += [
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
                for call in message.tool_calls
            ]
            append("assistant", blocks)
        elif isinstance(message, ToolMessage):
            append("user", [_tool_result(message.result, profile)])
    return "\n\n".join(system), wire


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


def _tool_definition(tool: ToolSpec) -> dict[str, Any]:
    definition: dict[str, Any] = {
        "name": tool.name,
        "input_schema": transform_schema(tool.input_schema, "anthropic"),
    }
    if tool.description:
        definition["description"] = tool.description
    return definition
