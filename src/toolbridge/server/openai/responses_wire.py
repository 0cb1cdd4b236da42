"""OpenAI's Responses API in our terms: a request's `input` items, `instructions`, `tools` and
`tool_choice` as neutral messages, `ToolSpec`s and `ModelSettings` (the answer side is in `responses.py`).

Input items: `message` (roles `system`, `developer`, `user`, `assistant`; text as a string or
`input_text` / `output_text` parts, `input_image` as a data URL), `function_call`,
`function_call_output` and `reasoning` (its text goes with the assistant turn that follows), the last
three checked against the `openai` SDK's types. Tools: the `function` ones; the others (web search,
namespaces of tools run elsewhere) only OpenAI's API runs, and are left out.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

from openai.types.responses import ResponseFunctionToolCallParam, ResponseReasoningItemParam
from openai.types.responses.response_input_item_param import FunctionCallOutput
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

__all__ = ["ResponsesRequest", "read_input", "read_settings", "read_tools"]

logger = logging.getLogger(__name__)

_NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
_TYPED_ITEMS: dict[str, TypeAdapter[Any]] = {
    "function_call": TypeAdapter(ResponseFunctionToolCallParam),
    "function_call_output": TypeAdapter(FunctionCallOutput),
    "reasoning": TypeAdapter(ResponseReasoningItemParam),
}
"""The input items checked against the `openai` SDK's own types (messages, whose content takes several
shapes, are read part by part)."""


class ResponsesRequest(BaseModel):
    """`POST /v1/responses`: the fields toolbridge reads (the others, such as `include` or
    `prompt_cache_key`, are taken and left alone)."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(min_length=1)
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    stream: bool = False
    max_output_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, ge=0, le=1)
    previous_response_id: str | None = Field(default=None, max_length=100)
    store: bool | None = None


async def read_tools(request: ResponsesRequest) -> list[ToolSpec]:
    if not request.tools or request.tool_choice == "none":
        return []
    left_out = {str(tool.get("type")) for tool in request.tools if tool.get("type") != "function"}
    if left_out:
        logger.info("left out tools only OpenAI's API runs: %s", ", ".join(sorted(left_out)))
    functions: list[ToolDefinition] = []
    for index, tool in enumerate(request.tools):
        if tool.get("type") != "function":
            continue
        if not isinstance(tool.get("name"), str) or not tool["name"]:
            raise ApiError(400, "a function tool needs a name", param=f"tools.{index}.name")
        functions.append(
            ToolDefinition(
                tool["name"],
                str(tool.get("description") or ""),
                tool.get("parameters") or _NO_PARAMETERS,
                where=f"tools.{index}",
            )
        )
    return await checked_tools(functions, brought=len(request.tools))


def read_settings(request: ResponsesRequest, tools: list[ToolSpec]) -> ModelSettings:
    choice = request.tool_choice
    tool_choice: Literal["required"] | NamedTool | None = None
    if choice == "required":
        tool_choice = "required"
    elif isinstance(choice, dict) and choice.get("type") == "function":
        name = str(choice.get("name"))
        if name not in {tool.name for tool in tools}:
            raise ApiError(
                400,
                f"tool_choice names the function {name!r}, which is not among the request's tools",
                param="tool_choice.name",
            )
        tool_choice = NamedTool(name)
    if tool_choice is not None and not tools:
        raise ApiError(400, "tool_choice asks for a call but the request has no tools", param="tool_choice")
    return ModelSettings(
        temperature=request.temperature,
        max_tokens=request.max_output_tokens,
        tool_choice=tool_choice,
        parallel_tool_calls=request.parallel_tool_calls if tools else None,
        top_p=request.top_p,
    )


def read_input(request: ResponsesRequest) -> list[Message]:
    """The conversation as neutral messages: `instructions` and the system and developer messages as one
    system message first; consecutive function calls (and the reasoning before them) as one assistant
    turn, each output as a tool message."""
    items = (
        [{"type": "message", "role": "user", "content": request.input}]
        if isinstance(request.input, str)
        else request.input
    )
    system: list[str] = [request.instructions] if request.instructions else []
    messages: list[Message] = []
    names: dict[str, str] = {}
    reasoning = ""
    for index, item in enumerate(items):
        kind = item.get("type", "message")
        where = f"input.{index}"
        if kind in _TYPED_ITEMS:
            _check_item(kind, item, where)
        if kind == "message":
            role = item.get("role")
            if role in ("system", "developer"):
                system.append(_text(item.get("content"), where))
            elif role == "assistant":
                messages.append(
                    AssistantMessage(content=_text(item.get("content"), where), reasoning=reasoning)
                )
                reasoning = ""
            elif role == "user":
                messages.append(_user(item.get("content"), where))
            else:
                raise ApiError(400, f"unknown message role {role!r}", param=f"{where}.role")
        elif kind == "reasoning":
            reasoning += "".join(
                str(part.get("text", ""))
                for part in (item.get("summary") or []) + (item.get("content") or [])
            )
        elif kind == "function_call":
            call = ToolCall(
                id=str(item.get("call_id")),
                name=str(item.get("name")),
                arguments=_arguments(item.get("arguments")),
            )
            names[call.id] = call.name
            last = messages[-1] if messages else None
            if isinstance(last, AssistantMessage) and not reasoning:
                messages[-1] = last.model_copy(update={"tool_calls": [*last.tool_calls, call]})
            else:
                messages.append(AssistantMessage(content="", reasoning=reasoning, tool_calls=[call]))
            reasoning = ""
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            output = item.get("output")
            text = output if isinstance(output, str) else _text(output, where)
            result = ToolResult(call_id=call_id, content=[TextPart(text=text)])
            messages.append(ToolMessage(name=names.get(call_id, "tool"), result=result))
        else:
            raise ApiError(400, f"input items of type {kind!r} are not supported", param=f"{where}.type")
    if system:
        messages.insert(0, SystemMessage(content="\n\n".join(part for part in system if part)))
    return messages


def _check_item(kind: str, item: dict[str, Any], where: str) -> None:
    try:
        _TYPED_ITEMS[kind].validate_python(item)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"][:1])
        raise ApiError(
            400,
            f"{where} is not a valid {kind} item: {field + ': ' if field else ''}{first['msg']}",
            param=f"{where}.{field}" if field else where,
        ) from None


def _text(content: Any, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for number, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text", "text"):
            texts.append(str(part.get("text", "")))
        elif kind != "input_image":
            raise ApiError(
                400,
                f"content parts of type {kind!r} are not supported here",
                param=f"{where}.content.{number}",
            )
    return "\n".join(texts)


def _user(content: Any, where: str) -> UserMessage:
    attachments: list[ContentPart] = []
    for number, part in enumerate(content if isinstance(content, list) else []):
        if isinstance(part, dict) and part.get("type") == "input_image":
            header, comma, data = str(part.get("image_url") or "").partition(",")
            if not (header.startswith("data:") and header.endswith(";base64") and comma):
                raise ApiError(
                    400,
                    "an image must be sent as a data URL; toolbridge does not fetch image URLs",
                    param=f"{where}.content.{number}",
                )
            attachments.append(
                ImagePart(data=data, mime_type=header.removeprefix("data:").removesuffix(";base64"))
            )
    return UserMessage(content=_text(content, where), attachments=attachments)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except (ValueError, RecursionError):
        return {}  # broken arguments in the history: the model sees an empty call
    return value if isinstance(value, dict) else {}
