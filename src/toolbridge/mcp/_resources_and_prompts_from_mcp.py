"""MCP resources and prompts -> toolbridge's values (`_resource_and_prompt_info.py`), the only place that knows both."""

from __future__ import annotations

from collections.abc import Sequence

import mcp_types as mcp

from toolbridge.mcp._convert import content_part_from_mcp
from toolbridge.mcp._resource_and_prompt_info import (
    PromptArgumentInfo,
    PromptInfo,
    ResourceInfo,
    ResourceTemplateInfo,
)
from toolbridge.types import AssistantMessage, ContentPart, Message, ResourcePart, TextPart, UserMessage

__all__ = [
    "prompt_from_mcp",
    "prompt_messages_from_mcp",
    "resource_from_mcp",
    "resource_part_from_mcp",
    "template_from_mcp",
]


def resource_from_mcp(resource: mcp.Resource, *, server: str) -> ResourceInfo:
    return ResourceInfo(
        server=server,
        uri=str(resource.uri),
        name=resource.name,
        title=resource.title,
        description=resource.description,
        mime_type=resource.mime_type,
        size=resource.size,
    )


def template_from_mcp(template: mcp.ResourceTemplate, *, server: str) -> ResourceTemplateInfo:
    return ResourceTemplateInfo(
        server=server,
        uri_template=template.uri_template,
        name=template.name,
        title=template.title,
        description=template.description,
        mime_type=template.mime_type,
    )


def prompt_from_mcp(prompt: mcp.Prompt, *, server: str) -> PromptInfo:
    return PromptInfo(
        server=server,
        name=prompt.name,
        title=prompt.title,
        description=prompt.description,
        arguments=[
            PromptArgumentInfo(
                name=argument.name,
                title=argument.title,
                description=argument.description,
                required=bool(argument.required),
            )
            for argument in prompt.arguments or []
        ],
    )


def resource_part_from_mcp(contents: mcp.TextResourceContents | mcp.BlobResourceContents) -> ResourcePart:
    if isinstance(contents, mcp.TextResourceContents):
        return ResourcePart(uri=str(contents.uri), mime_type=contents.mime_type, text=contents.text)
    return ResourcePart(uri=str(contents.uri), mime_type=contents.mime_type, blob=contents.blob)


def prompt_messages_from_mcp(messages: Sequence[mcp.PromptMessage]) -> list[Message]:
    """One neutral message per run of same-role messages: a prompt's text and the resources it embeds
    (separate MCP messages) become one user message with attachments, as a person would send them."""
    converted: list[Message] = []
    for message in messages:
        part = content_part_from_mcp(message.content)
        previous = converted[-1] if converted else None
        if message.role == "user":
            text, attachments = _user_content(part)
            if isinstance(previous, UserMessage):
                joined = "\n\n".join(filter(None, [previous.content, text]))
                converted[-1] = UserMessage(content=joined, attachments=[*previous.attachments, *attachments])
            else:
                converted.append(UserMessage(content=text, attachments=attachments))
        else:
            # An assistant turn is text to models; anything else in it is described.
            text = part.text if isinstance(part, TextPart) else _describe(part)
            if isinstance(previous, AssistantMessage):
                converted[-1] = AssistantMessage(content="\n\n".join(filter(None, [previous.content, text])))
            else:
                converted.append(AssistantMessage(content=text))
    return converted


def _user_content(part: ContentPart) -> tuple[str, list[ContentPart]]:
    if isinstance(part, TextPart):
        return part.text, []
    return "", [part]


def _describe(part: ContentPart) -> str:
    if isinstance(part, ResourcePart):
        return part.text if part.text is not None else f"[resource {part.uri}]"
    if isinstance(part, TextPart):
        return part.text
    return f"[{part.type} {part.mime_type}]"
