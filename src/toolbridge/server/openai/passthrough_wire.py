"""A pass-through request in our terms, and tool calls in OpenAI's terms.

Reading: the client's `tools` become `ToolSpec`s, its messages (system and developer, content parts,
assistant `tool_calls`, `tool` messages) our neutral messages, and `tool_choice` with the sampling fields
one `ModelSettings`. Writing: calls as `message.tool_calls`, or as the stream's `delta.tool_calls` in
OpenAI's exact shape (per call: `index`, `id`, `type` and `function.name` first, then `function.arguments`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from toolbridge.models import ModelSettings, NamedTool
from toolbridge.server._errors import ApiError
from toolbridge.server.openai.client_tools import ToolDefinition, checked_tools
from toolbridge.server.openai.wire import ChatCompletionRequest, WireMessage, WireToolCall
from toolbridge.types import (
    AssistantMessage,
    AudioPart,
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

__all__ = [
    "client_messages",
    "client_settings",
    "client_tools",
    "tool_call_deltas",
    "tool_calls_wire",
]

_NO_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
_AUDIO_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}


async def client_tools(request: ChatCompletionRequest) -> list[ToolSpec]:
    """The client's tools, unless `tool_choice` is `none` (then none are offered)."""
    if request.tool_choice == "none" or not request.tools:
        return []
    definitions = [
        ToolDefinition(
            tool.function.name,
            tool.function.description or "",
            tool.function.parameters or _NO_PARAMETERS,
            where=f"tools.{index}.function",
        )
        for index, tool in enumerate(request.tools)
    ]
    return await checked_tools(definitions, brought=len(request.tools))


def client_settings(request: ChatCompletionRequest, tools: list[ToolSpec]) -> ModelSettings:
    """The request's `tool_choice`, `parallel_tool_calls` and sampling fields, as our model settings."""
    choice = request.tool_choice
    tool_choice: Literal["required"] | NamedTool | None = None
    if choice == "required":
        tool_choice = "required"
    elif choice is not None and not isinstance(choice, str):
        name = choice.function.name
        if name not in {tool.name for tool in tools}:
            known = ", ".join(tool.name for tool in tools) or "none"
            raise ApiError(
                400,
                f"tool_choice names the function {name!r}, which is not among the request's tools ({known})",
                param="tool_choice.function.name",
            )
        tool_choice = NamedTool(name)
    if tool_choice == "required" and not tools:
        raise ApiError(400, "tool_choice is 'required' but the request has no tools", param="tool_choice")
    stop = (request.stop,) if isinstance(request.stop, str) else tuple(request.stop or ())
    return ModelSettings(
        temperature=request.temperature,
        max_tokens=request.max_completion_tokens or request.max_tokens,
        tool_choice=tool_choice,
        parallel_tool_calls=request.parallel_tool_calls if tools else None,
        top_p=request.top_p,
        stop=stop,
        seed=request.seed,
        user=request.user,
        response_format=request.response_format,
    )


def client_messages(request: ChatCompletionRequest) -> list[Message]:
    """The conversation as neutral messages: the system and developer messages joined into one at the
    start (where every adapter can send it), the rest in order."""
    system: list[str] = []
    messages: list[Message] = []
    call_names: dict[str, str] = {}
    for index, message in enumerate(request.messages):
        where = f"messages.{index}"
        if message.role in ("system", "developer"):
            if text := _text(message, where):
                system.append(text)
        elif message.role == "user":
            messages.append(_user_message(message, where))
        elif message.role == "assistant":
            calls = [_tool_call(raw) for raw in message.tool_calls or []]
            call_names.update({call.id: call.name for call in calls})
            reasoning = (message.model_extra or {}).get("reasoning_content")
            messages.append(
                AssistantMessage(
                    content=_text(message, where),
                    reasoning=reasoning if isinstance(reasoning, str) else "",
                    tool_calls=calls,
                )
            )
        else:
            call_id = message.tool_call_id
            if not call_id:
                raise ApiError(
                    400,
                    "a tool message needs the tool_call_id of the call it answers",
                    param=f"{where}.tool_call_id",
                )
            result = ToolResult(call_id=call_id, content=[TextPart(text=_text(message, where))])
            messages.append(ToolMessage(name=call_names.get(call_id, "tool"), result=result))
    if system:
        messages.insert(0, SystemMessage(content="\n\n".join(system)))
    return messages


def _text(message: WireMessage, where: str) -> str:
    content = message.content
    if content is None or isinstance(content, str):
        return content or ""
    texts = []
    for number, part in enumerate(content):
        kind = part.get("type")
        if kind in ("text", "refusal"):
            texts.append(str(part.get(kind) or ""))
        elif message.role != "user":
            raise ApiError(
                400,
                f"{message.role} messages hold text parts only, not {kind!r}",
                param=f"{where}.content.{number}.type",
            )
    return "\n".join(texts)


def _user_message(message: WireMessage, where: str) -> UserMessage:
    if not isinstance(message.content, list):
        return UserMessage(content=message.content or "")
    attachments: list[ContentPart] = []
    for number, part in enumerate(message.content):
        kind = part.get("type")
        if kind == "image_url":
            attachments.append(_image(part, f"{where}.content.{number}.image_url"))
        elif kind == "input_audio":
            attachments.append(_audio(part, f"{where}.content.{number}.input_audio"))
        elif kind != "text":
            raise ApiError(
                400,
                f"content parts of type {kind!r} are not supported; send text, image_url or input_audio",
                param=f"{where}.content.{number}.type",
            )
    return UserMessage(content=_text(message, where), attachments=attachments)


def _image(part: dict[str, Any], where: str) -> ImagePart:
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else image
    header, comma, data = str(url or "").partition(",")
    if not (header.startswith("data:") and header.endswith(";base64") and comma and data):
        raise ApiError(
            400,
            "an image must be sent as a data URL (data:image/png;base64,...); toolbridge does not fetch "
            "image URLs for the model",
            param=f"{where}.url",
        )
    return ImagePart(data=data, mime_type=header.removeprefix("data:").removesuffix(";base64"))


def _audio(part: dict[str, Any], where: str) -> AudioPart:
    audio = part.get("input_audio")
    data = audio.get("data") if isinstance(audio, dict) else None
    kind = audio.get("format") if isinstance(audio, dict) else None
    if not isinstance(data, str) or not data or kind not in _AUDIO_TYPES:
        raise ApiError(400, "input_audio needs base64 `data` and a `format` of wav or mp3", param=where)
    return AudioPart(data=data, mime_type=_AUDIO_TYPES[kind])


def _tool_call(raw: WireToolCall) -> ToolCall:
    arguments: Any = raw.function.arguments
    if not isinstance(arguments, dict):
        try:
            arguments = json.loads(arguments or "{}")
        except (ValueError, RecursionError):
            arguments = {}  # broken arguments in the history: the model sees an empty call, as upstream
    return ToolCall(
        name=raw.function.name,
        arguments=arguments if isinstance(arguments, dict) else {},
        **({"id": raw.id} if raw.id else {}),
    )


# -- our calls -> OpenAI's wire --------------------------------------------------------------------------


def tool_calls_wire(calls: list[ToolCall]) -> list[dict[str, Any]]:
    """`message.tool_calls` of a completion."""
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
        }
        for call in calls
    ]


def tool_call_deltas(index: int, call: ToolCall) -> list[dict[str, Any]]:
    """The `delta.tool_calls` items that stream one call, as OpenAI sends them: the call's `index`, `id`,
    `type` and `function.name` (with empty arguments) first, then the arguments."""
    arguments = json.dumps(call.arguments, ensure_ascii=False)
    return [
        {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}},
        {"index": index, "function": {"arguments": arguments}},
    ]
