"""MCP SDK types -> toolbridge's neutral `ToolSpec` and `ToolResult`. The only place that knows both."""

from __future__ import annotations

from typing import Any, get_args

import mcp_types as mcp

from toolbridge.types import (
    AudioPart,
    ContentPart,
    ImagePart,
    ResourcePart,
    TextPart,
    ToolAnnotations,
    ToolAudience,
    ToolResult,
    ToolSpec,
)

__all__ = ["content_part_from_mcp", "tool_result_from_mcp", "tool_spec_from_mcp"]


def tool_spec_from_mcp(tool: mcp.Tool, *, source: str) -> ToolSpec:
    hints = tool.annotations
    annotations = (
        ToolAnnotations(
            title=hints.title,
            read_only_hint=hints.read_only_hint,
            destructive_hint=hints.destructive_hint,
            idempotent_hint=hints.idempotent_hint,
            open_world_hint=hints.open_world_hint,
        )
        if hints is not None
        else ToolAnnotations()
    )
    return ToolSpec(
        name=tool.name,
        title=tool.title or annotations.title,
        description=tool.description or "",
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=annotations,
        source=source,
        visibility=_visibility(tool.meta),
    )


_AUDIENCES: tuple[ToolAudience, ...] = get_args(ToolAudience)


def _visibility(meta: dict[str, Any] | None) -> tuple[ToolAudience, ...]:
    """MCP Apps' `_meta.ui.visibility`: who may see and call the tool (absent: the model and apps)."""
    ui = (meta or {}).get("ui")
    listed = ui.get("visibility") if isinstance(ui, dict) else None
    if not isinstance(listed, list):
        return _AUDIENCES
    return tuple(audience for audience in _AUDIENCES if audience in listed)


def tool_result_from_mcp(
    result: mcp.CallToolResult, *, call_id: str, server: str, duration: float
) -> ToolResult:
    content = [content_part_from_mcp(block) for block in result.content]
    structured = result.structured_content
    if result.is_error:
        return ToolResult(
            call_id=call_id,
            content=content,
            structured_content=_structured(structured),
            is_error=True,
            server=server,
            duration=duration,
            error_kind="server_error",
        )
    if structured is None:  # the usual success: the fields left out keep their defaults, at less cost
        return ToolResult(call_id=call_id, content=content, server=server, duration=duration)
    return ToolResult(
        call_id=call_id,
        content=content,
        structured_content=_structured(structured),
        server=server,
        duration=duration,
    )


def content_part_from_mcp(block: mcp.ContentBlock) -> ContentPart:
    match block:
        case mcp.TextContent():
            return TextPart(text=block.text)
        case mcp.ImageContent():
            return ImagePart(data=block.data, mime_type=block.mime_type)
        case mcp.AudioContent():
            return AudioPart(data=block.data, mime_type=block.mime_type)
        case mcp.EmbeddedResource(resource=mcp.TextResourceContents() as contents):
            return ResourcePart(uri=str(contents.uri), mime_type=contents.mime_type, text=contents.text)
        case mcp.EmbeddedResource(resource=mcp.BlobResourceContents() as contents):
            return ResourcePart(uri=str(contents.uri), mime_type=contents.mime_type, blob=contents.blob)
        case mcp.ResourceLink():
            # A link has neither text nor blob; that is how ResourcePart tells the two apart.
            return ResourcePart(uri=str(block.uri), mime_type=block.mime_type)
    raise AssertionError(f"unhandled MCP content block {type(block).__name__}")  # pragma: no cover


def _structured(value: Any) -> dict[str, Any] | None:
    if value is None or isinstance(value, dict):
        return value
    # The spec says structuredContent is an object; keep a non-conforming value rather than drop it.
    return {"result": value}
