"""Anthropic's Messages API in our terms, and our answers in its terms, with the `anthropic` SDK's own
types for both (its request `TypedDict`s validate what clients send; its response and event models are
what goes out).

Reading: `system` (a string or text blocks), `messages` with `text`, `image` (base64), `tool_use`,
`tool_result` and `thinking` blocks, the custom `tools` (Anthropic's server tools, which only its own API
runs, are left out), `tool_choice` (`auto`, `any`, `tool`, `none`, `disable_parallel_tool_use`) and the
sampling fields, as neutral messages, `ToolSpec`s and one `ModelSettings`.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any, Literal

from anthropic.types import (
    MessageParam,
    TextBlockParam,
    ToolChoiceParam,
    ToolParam,
)
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from toolbridge.models import ModelSettings, NamedTool
from toolbridge.server._errors import ApiError
from toolbridge.server.openai.client_tools import ToolDefinition, checked_tools
from toolbridge.types import (
    AssistantMessage,
    ContentPart,
    ImagePart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
)

__all__ = ["MessagesRequest", "message_id", "read_messages", "read_settings", "read_tools", "stop_reason"]

logger = logging.getLogger(__name__)

_CUSTOM_TOOL = TypeAdapter(ToolParam)
_STOP_REASONS = {"tool_calls": "tool_use", "length": "max_tokens", "stop": "end_turn"}


class MessagesRequest(BaseModel):
    """`POST /v1/messages`: the fields toolbridge reads, each typed by the SDK's own request types."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(min_length=1)
    max_tokens: int = Field(gt=0)
    messages: list[MessageParam]
    system: str | list[TextBlockParam] | None = None
    tools: list[dict[str, Any]] | None = None
    """Checked one by one: custom tools are `ToolParam`s; Anthropic's server tools are left out."""
    tool_choice: ToolChoiceParam | None = None
    stream: bool = False
    temperature: float | None = Field(default=None, ge=0, le=1)
    top_p: float | None = Field(default=None, ge=0, le=1)
    stop_sequences: list[str] | None = None


def message_id() -> str:
    return f"msg_{uuid.uuid4().hex[:24]}"


def stop_reason(finish_reason: str) -> Literal["end_turn", "max_tokens", "tool_use"]:
    """Anthropic's `stop_reason` for a pass-through's (OpenAI-style) finish reason."""
    reason = _STOP_REASONS.get(finish_reason, "end_turn")
    return reason  # type: ignore[return-value]


async def read_tools(request: MessagesRequest) -> list[ToolSpec]:
    """The client's custom tools (none when `tool_choice` is `none`)."""
    if not request.tools or _choice(request).get("type") == "none":
        return []
    custom: list[ToolDefinition] = []
    for index, raw in enumerate(request.tools):
        if raw.get("type") not in (None, "custom"):
            logger.info("left out Anthropic's server tool %r: only Anthropic's API runs it", raw.get("type"))
            continue
        try:
            tool = _CUSTOM_TOOL.validate_python(raw)
        except ValidationError as error:
            where = ".".join(str(part) for part in error.errors()[0]["loc"])
            raise ApiError(
                400,
                f"tools.{index} is not a valid tool: {error.errors()[0]['msg']}",
                param=f"tools.{index}.{where}",
            ) from None
        custom.append(
            ToolDefinition(
                tool["name"],
                tool.get("description") or "",
                dict(tool["input_schema"]),
                where=f"tools.{index}",
                schema_field="input_schema",
            )
        )
    return await checked_tools(custom, brought=len(request.tools))


def read_settings(request: MessagesRequest, tools: list[ToolSpec]) -> ModelSettings:
    choice = _choice(request)
    tool_choice: Literal["required"] | NamedTool | None = None
    if choice.get("type") == "any":
        tool_choice = "required"
    elif choice.get("type") == "tool":
        name = str(choice.get("name"))
        if name not in {tool.name for tool in tools}:
            raise ApiError(
                400,
                f"tool_choice names the tool {name!r}, which is not among the request's tools",
                param="tool_choice.name",
            )
        tool_choice = NamedTool(name)
    if tool_choice is not None and not tools:
        raise ApiError(
            400, "tool_choice asks for a tool call but the request has no tools", param="tool_choice"
        )
    parallel = False if choice.get("disable_parallel_tool_use") else None
    return ModelSettings(
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel if tools else None,
        top_p=request.top_p,
        stop=tuple(request.stop_sequences or ()),
    )


def _choice(request: MessagesRequest) -> dict[str, Any]:
    return dict(request.tool_choice or {})


def read_messages(request: MessagesRequest) -> list[Message]:
    """The conversation as neutral messages: `system` first, then each message's blocks (tool results
    become tool messages, in the order the user message gives them, before its text)."""
    messages: list[Message] = []
    system = (
        request.system
        if isinstance(request.system, str)
        else "\n\n".join(b["text"] for b in request.system or [])
    )
    if system:
        messages.append(SystemMessage(content=system))
    names: dict[str, str] = {}
    for index, message in enumerate(request.messages):
        content = message["content"]
        blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
        where = f"messages.{index}.content"
        if message["role"] == "assistant":
            messages.append(_assistant(blocks, names, where))
        else:
            messages += _user(blocks, names, where)
    return messages


def _assistant(blocks: list[Any], names: dict[str, str], where: str) -> AssistantMessage:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for number, block in enumerate(blocks):
        kind = _kind(block)
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "thinking":
            reasoning.append(str(block.get("thinking", "")))
        elif kind == "tool_use":
            arguments = block.get("input")
            call = ToolCall(
                id=str(block["id"]),
                name=str(block["name"]),
                arguments=arguments if isinstance(arguments, dict) else {},
            )
            names[call.id] = call.name
            calls.append(call)
        elif kind != "redacted_thinking":
            raise ApiError(
                400,
                f"assistant messages hold text, thinking and tool_use blocks, not {kind!r}",
                param=f"{where}.{number}.type",
            )
    return AssistantMessage(content="".join(texts), reasoning="".join(reasoning), tool_calls=calls)


def _user(blocks: list[Any], names: dict[str, str], where: str) -> list[Message]:
    results: list[Message] = []
    texts: list[str] = []
    attachments: list[ContentPart] = []
    for number, block in enumerate(blocks):
        kind = _kind(block)
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "image":
            attachments.append(_image(block, f"{where}.{number}.source"))
        elif kind == "tool_result":
            call_id = str(block.get("tool_use_id", ""))
            result = ToolResult(
                call_id=call_id,
                content=[TextPart(text=_result_text(block.get("content")))],
                is_error=bool(block.get("is_error")),
            )
            results.append(ToolMessage(name=names.get(call_id, "tool"), result=result))
        else:
            raise ApiError(
                400,
                f"user messages hold text, image and tool_result blocks, not {kind!r}",
                param=f"{where}.{number}.type",
            )
    if texts or attachments:
        results.append(UserMessage(content="\n".join(texts), attachments=attachments))
    return results


def _kind(block: Any) -> str:
    return str(block.get("type")) if isinstance(block, dict) else "?"


def _result_text(content: Any) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return "\n".join(
        str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text"
    )


def _image(block: dict[str, Any], where: str) -> ImagePart:
    source = block.get("source")
    if not isinstance(source, dict) or source.get("type") != "base64":
        raise ApiError(
            400, "an image must be sent as base64 data; toolbridge does not fetch image URLs", param=where
        )
    return ImagePart(data=str(source.get("data", "")), mime_type=str(source.get("media_type", "image/png")))


def tool_input_json(call: ToolCall) -> str:
    return json.dumps(call.arguments, ensure_ascii=False)
