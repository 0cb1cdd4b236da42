"""The OpenAPI 3.1 document of `POST /tools/{name}`: one operation per tool, for any OpenAPI client.

Each tool's input schema is the request body's schema and its output schema (where it has one) types
the answer's `structured_content`. The schemas are kept whole under `components/schemas` as
`<tool>.input` and `<tool>.output`, and their own references (`#/$defs/...`, `#/definitions/...`, `#`)
are rewritten to point there: in the document, `#` is the document, not the tool's schema.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, Field
from pydantic.alias_generators import to_camel

from toolbridge._version import __version__
from toolbridge.types import ContentPart, ToolSpec

__all__ = ["TOOL_PATH_PREFIX", "ToolAnswer", "tool_path", "tools_document"]

TOOL_PATH_PREFIX = "/tools/"
_COMPONENTS = "#/components/schemas/"
# Component names OpenAPI allows; other characters of a tool's name become `_`.
_NOT_IN_COMPONENT_NAME = re.compile(r"[^A-Za-z0-9._-]")
# Values that are data, not schemas: a `$ref` key inside them is not a reference.
_DATA_KEYWORDS = frozenset({"const", "default", "enum", "example", "examples"})
# Keywords whose value maps names to schemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
_SUMMARY_LENGTH = 120


class ToolAnswer(BaseModel):
    """The answer to a call that succeeded (HTTP 200)."""

    text: str = Field(
        description="The result as one string: toolbridge's notes, the text parts, and the structured "
        "content as JSON when there is no text part."
    )
    content: list[ContentPart] = Field(description="The result's parts: text, image, audio, resource.")
    structured_content: dict[str, Any] | None = Field(
        description="The tool's structured result (checked against its output schema), if it gave one."
    )
    server: str | None = Field(
        description="The MCP server that ran the tool (`native` for toolbridge's own)."
    )
    duration: float = Field(description="Seconds the call took.")
    cached: bool = Field(description="Served from toolbridge's result cache.")
    notes: list[str] = Field(description="What toolbridge did on the way (arguments it coerced).")


_ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "Every error of toolbridge's HTTP API has this shape.",
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "message": {"type": "string", "description": "What was wrong and what to do."},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {
                    "type": ["string", "null"],
                    "description": "unknown_tool, invalid_arguments, approval_required, server_error, "
                    "server_unavailable, timeout, cut_off, cancelled, invalid_json, ...",
                },
            },
            "required": ["message", "type", "param", "code"],
        }
    },
    "required": ["error"],
}


def tool_path(name: str) -> str:
    """The tool's URL path: its name percent-encoded as one path segment."""
    return TOOL_PATH_PREFIX + quote(name, safe="")


def tools_document(tools: Iterable[ToolSpec], *, bearer: bool) -> dict[str, Any]:
    """The OpenAPI 3.1 document for `tools`; `bearer`: every operation needs a bearer token."""
    answer = ToolAnswer.model_json_schema(ref_template=_COMPONENTS + "{model}", mode="serialization")
    schemas: dict[str, Any] = {**answer.pop("$defs", {}), "ToolAnswer": answer, "Error": _ERROR_SCHEMA}
    paths: dict[str, Any] = {}
    taken = set(schemas)
    for tool in tools:
        key = _component_key(tool.name, taken)
        schemas[f"{key}.input"] = _relocated(tool.input_schema, f"{_COMPONENTS}{key}.input")
        if tool.output_schema is not None:
            schemas[f"{key}.output"] = _relocated(tool.output_schema, f"{_COMPONENTS}{key}.output")
        paths[tool_path(tool.name)] = {"post": _operation(tool, key)}
    document: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "toolbridge tools",
            "version": __version__,
            "description": "The tools of toolbridge's MCP servers (and its own), one operation each: "
            "POST the tool's arguments as a JSON object, get its result as JSON.",
        },
        "paths": paths,
        "components": {"schemas": schemas},
    }
    if bearer:
        document["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        document["security"] = [{"bearer": []}]
    return document


def _operation(tool: ToolSpec, key: str) -> dict[str, Any]:
    answer: dict[str, Any] = {"$ref": f"{_COMPONENTS}ToolAnswer"}
    if tool.output_schema is not None:
        typed = {
            "type": "object",
            "properties": {"structured_content": {"$ref": f"{_COMPONENTS}{key}.output"}},
            "required": ["structured_content"],
        }
        answer = {"allOf": [answer, typed]}
    error = {"content": {"application/json": {"schema": {"$ref": f"{_COMPONENTS}Error"}}}}
    operation: dict[str, Any] = {
        "operationId": tool.name,
        "summary": _summary(tool),
        "description": tool.description,
        "tags": [tool.source],
        "requestBody": {
            # A tool with no required argument may be called with no body at all.
            "required": bool(tool.input_schema.get("required")),
            "content": {"application/json": {"schema": {"$ref": f"{_COMPONENTS}{key}.input"}}},
        },
        "responses": {
            "200": {
                "description": "The tool's result.",
                "content": {"application/json": {"schema": answer}},
            },
            "4XX": {
                "description": "Refused: 404 unknown tool, 422 arguments that do not fit the schema, "
                "403 the call needs approval, 400 a body that is not a JSON object.",
                **error,
            },
            "5XX": {
                "description": "The call failed: 502 the tool reported an error, 503 its server is "
                "unavailable, 504 it timed out.",
                **error,
            },
        },
    }
    hints = {to_camel(name): value for name, value in tool.annotations.model_dump(exclude_none=True).items()}
    if hints:
        operation["x-mcp-annotations"] = hints
    return operation


def _summary(tool: ToolSpec) -> str:
    title = tool.title or tool.annotations.title
    if title:
        return title
    first_line = tool.description.strip().split("\n", 1)[0]
    if not first_line:
        return tool.name
    return first_line if len(first_line) <= _SUMMARY_LENGTH else first_line[: _SUMMARY_LENGTH - 1] + "…"


def _component_key(name: str, taken: set[str]) -> str:
    base = _NOT_IN_COMPONENT_NAME.sub("_", name) or "tool"
    key, number = base, 1
    while key in taken:
        number += 1
        key = f"{base}_{number}"
    taken.add(key)
    return key


def _relocated(schema: Any, base: str) -> Any:
    """`schema` with its document-local references (`#...`) made relative to `base`."""
    if isinstance(schema, list):
        return [_relocated(item, base) for item in schema]
    if not isinstance(schema, dict):
        return schema
    moved: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str) and value.startswith("#"):
            moved[key] = base + value[1:]
        elif key in _DATA_KEYWORDS:
            moved[key] = value
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            # Names (of properties, of definitions) to schemas: a name is never a keyword.
            moved[key] = {name: _relocated(item, base) for name, item in value.items()}
        else:
            moved[key] = _relocated(value, base)
    return moved
