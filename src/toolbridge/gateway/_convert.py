"""toolbridge's neutral tool values -> MCP SDK types, for what the gateway answers its clients."""

from __future__ import annotations

import json

import mcp_types as mcp

from toolbridge.types import AudioPart, ContentPart, ImagePart, ResourcePart, TextPart, ToolResult, ToolSpec

__all__ = ["call_result_to_mcp", "content_block_to_mcp", "sent_size", "tool_to_mcp"]


def tool_to_mcp(spec: ToolSpec) -> mcp.Tool:
    """The tool under the name toolbridge exposes it as, with its schemas and hints intact."""
    hints = spec.annotations
    annotations = mcp.ToolAnnotations(
        title=hints.title,
        read_only_hint=hints.read_only_hint,
        destructive_hint=hints.destructive_hint,
        idempotent_hint=hints.idempotent_hint,
        open_world_hint=hints.open_world_hint,
    )
    return mcp.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description or None,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=annotations if annotations.model_dump(exclude_none=True) else None,
    )


def call_result_to_mcp(result: ToolResult) -> mcp.CallToolResult:
    return mcp.CallToolResult(
        content=[content_block_to_mcp(part) for part in result.content],
        structured_content=result.structured_content,
        is_error=result.is_error,
    )


def sent_size(result: ToolResult, limit: int) -> int:
    """About how many characters the result takes on the wire: text, media and resources as sent, and
    its structured content (measured only when the rest is within `limit`)."""
    size = 0
    for part in result.content:
        match part:
            case TextPart():
                size += len(part.text)
            case ImagePart() | AudioPart():
                size += len(part.data)
            case ResourcePart():
                size += len(part.uri) + len(part.text or part.blob or "")
    if result.structured_content is not None and size <= limit:
        size += len(json.dumps(result.structured_content, ensure_ascii=False))
    return size


def content_block_to_mcp(part: ContentPart) -> mcp.ContentBlock:
    match part:
        case TextPart():
            return mcp.TextContent(type="text", text=part.text)
        case ImagePart():
            return mcp.ImageContent(type="image", data=part.data, mime_type=part.mime_type)
        case AudioPart():
            return mcp.AudioContent(type="audio", data=part.data, mime_type=part.mime_type)
        case ResourcePart(text=str() as text):
            contents = mcp.TextResourceContents(uri=part.uri, mime_type=part.mime_type, text=text)
            return mcp.EmbeddedResource(type="resource", resource=contents)
        case ResourcePart(blob=str() as blob):
            blob_contents = mcp.BlobResourceContents(uri=part.uri, mime_type=part.mime_type, blob=blob)
            return mcp.EmbeddedResource(type="resource", resource=blob_contents)
        case ResourcePart():
            # Neither text nor blob: the server sent a link.
            return mcp.ResourceLink(
                type="resource_link", uri=part.uri, name=part.uri, mime_type=part.mime_type
            )
    raise AssertionError(f"unhandled content part {type(part).__name__}")  # pragma: no cover
