"""Answering a server's `sampling/createMessage` with one of our models.

The request's conversation, system prompt, temperature and token limit become a `ModelRequest`; images
and audio in a user message become its attachments, which each model adapter sends as image parts where
the model takes images and describes in words where it does not (see `models/_attachments.py`); stop
sequences are applied to the streamed text here (the stream is closed at the first one, whatever the
provider supports); tools in the request are offered the way the model takes tools (natively or in the
prompt), with its `toolChoice` "required" enforced where the API can, and the model's calls come back as
`tool_use` content for the server to run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import mcp_types as mcp

from toolbridge.mcp._convert import content_part_from_mcp, tool_spec_from_mcp
from toolbridge.models import (
    Finish,
    Model,
    ModelRequest,
    ModelSettings,
    TextDelta,
    ToolCallDelta,
    tool_calling_model,
)
from toolbridge.types import (
    AssistantMessage,
    ContentPart,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
)

__all__ = ["SamplingReply", "sample_with", "sampling_messages"]

SamplingReply = mcp.CreateMessageResult | mcp.CreateMessageResultWithTools


def sampling_messages(params: mcp.CreateMessageRequestParams) -> list[Message]:
    """The request's system prompt and messages as our messages: a user message's images and audio as
    its attachments, a tool result's as its content; an assistant message's described in words (our
    assistant messages are text)."""
    messages: list[Message] = [SystemMessage(content=params.system_prompt)] if params.system_prompt else []
    tool_names: dict[str, str] = {}
    for message in params.messages:
        text: list[str] = []
        media: list[ContentPart] = []
        calls: list[ToolCall] = []
        for block in message.content_as_list:
            if isinstance(block, mcp.TextContent):
                text.append(block.text)
            elif isinstance(block, mcp.ToolUseContent):
                tool_names[block.id] = block.name
                calls.append(ToolCall(id=block.id, name=block.name, arguments=block.input))
            elif isinstance(block, mcp.ToolResultContent):
                result = ToolResult(
                    call_id=block.tool_use_id, content=_result_content(block), is_error=bool(block.is_error)
                )
                messages.append(ToolMessage(name=tool_names.get(block.tool_use_id, "tool"), result=result))
            elif message.role == "user":
                media.append(content_part_from_mcp(block))
            else:
                text.append(f"[{block.type} ({block.mime_type}) not shown]")
        if message.role == "assistant":
            messages.append(AssistantMessage(content="".join(text), tool_calls=calls))
        elif text or media:
            messages.append(UserMessage(content="\n".join(text), attachments=media))
    return messages


async def sample_with(
    model: Model, params: mcp.CreateMessageRequestParams, *, max_tokens: int | None = None, server: str = ""
) -> SamplingReply:
    """`model`'s reply to the request. The server's `maxTokens` is capped by `max_tokens` (the server's
    `sampling.max_tokens`) and by the model's own `max_tokens` setting, where set."""
    limit = min(cap for cap in (params.max_tokens, max_tokens, model.settings.max_tokens) if cap)
    required = params.tool_choice is not None and params.tool_choice.mode == "required"
    settings = ModelSettings(
        temperature=params.temperature, max_tokens=limit, tool_choice="required" if required else None
    )
    tools = _tools(params, server)
    messages = sampling_messages(params)
    if tools:
        wrapped = tool_calling_model(model)
        await wrapped.prepare()
        model = wrapped
    request = ModelRequest(messages=messages, tools=tools, settings=settings)
    text, stop_reason = "", "endTurn"
    calls: dict[int, list[ToolCallDelta]] = {}
    stops = [stop for stop in params.stop_sequences or () if stop]
    async with model.stream(request) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                text += event.text
                cut = _first_stop(text, stops)
                if cut is not None:
                    text, stop_reason = text[:cut], "stopSequence"
                    break
            elif isinstance(event, ToolCallDelta):
                calls.setdefault(event.index, []).append(event)
            elif isinstance(event, Finish) and event.reason == "length":
                stop_reason = "maxTokens"
    if not params.tools:
        return mcp.CreateMessageResult(
            role="assistant", content=mcp.TextContent(type="text", text=text), model=model.name,
            stop_reason=stop_reason,
        )  # fmt: skip
    content: list[mcp.SamplingMessageContentBlock] = [mcp.TextContent(type="text", text=text)] if text else []
    for index, pieces in sorted(calls.items()):
        content.append(_tool_use(index, pieces))
    if len(content) > (1 if text else 0):
        stop_reason = "toolUse"
    if not content:
        content.append(mcp.TextContent(type="text", text=""))
    return mcp.CreateMessageResultWithTools(
        role="assistant", content=content, model=model.name, stop_reason=stop_reason
    )


def _result_content(block: mcp.ToolResultContent) -> list[ContentPart]:
    """A tool result's text as one part (its structured content when it has no text), then its images
    and other parts as they are."""
    text = "\n".join(c.text for c in block.content if isinstance(c, mcp.TextContent))
    if block.structured_content is not None and not text:
        text = json.dumps(block.structured_content)
    others = [content_part_from_mcp(c) for c in block.content if not isinstance(c, mcp.TextContent)]
    return [TextPart(text=text), *others]


def _tools(params: mcp.CreateMessageRequestParams, server: str) -> Sequence[ToolSpec]:
    if not params.tools or (params.tool_choice is not None and params.tool_choice.mode == "none"):
        return ()
    return [tool_spec_from_mcp(tool, source=server or "sampling") for tool in params.tools]


def _tool_use(index: int, pieces: list[ToolCallDelta]) -> mcp.ToolUseContent:
    call_id = next((p.id for p in pieces if p.id), None) or f"toolu_{index}"
    name = next((p.name for p in pieces if p.name), None) or ""
    raw = "".join(p.arguments for p in pieces)
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):  # not JSON, or nested past the stack
        arguments = {"_unparsed": raw}
    return mcp.ToolUseContent(type="tool_use", id=call_id, name=name, input=arguments)


def _first_stop(text: str, stops: Sequence[str]) -> int | None:
    found = [index for stop in stops if (index := text.find(stop)) >= 0]
    return min(found) if found else None
