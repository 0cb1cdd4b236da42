"""How a model without native function calling is asked to call tools, in the words of a dialect.

The dialect (a call format of `toolbridge.parsing`, e.g. hermes) knows how a call is written:

    <tool_call>{"name": "get_current_time", "arguments": {"timezone": "Europe/Paris"}}</tool_call>

It is passed in as a `CallWriter`, so prompting depends on no parser. Results come back in
`<tool_result>` blocks. The model is never asked for a `source`: routing finds the server itself, and a
`source` a model guesses is more often wrong than right.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from toolbridge.prompting._refs import inline_refs
from toolbridge.types import ToolSpec

__all__ = ["CallWriter", "example_arguments", "render_calling_convention"]


class CallWriter(Protocol):
    """What the convention needs of a dialect: how it writes a call, and how it is described."""

    @property
    def call_noun(self) -> str:
        """What one call is called, e.g. "<tool_call> block"."""
        ...

    @property
    def call_instructions(self) -> str:
        """How to write one call, completing "To call a tool, write ..."."""
        ...

    def format_call(self, name: str, arguments: Mapping[str, Any]) -> str: ...


_FORMAT_EXAMPLES = {
    "date-time": "2025-01-31T09:30:00Z",
    "date": "2025-01-31",
    "time": "09:30:00",
    "duration": "PT1H",
    "email": "user@example.com",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com",
    "url": "https://example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}
_MAX_EXAMPLE_DEPTH = 6


def render_calling_convention(tools: Sequence[ToolSpec], dialect: CallWriter) -> str:
    """The instructions for calling tools in `dialect`, with one example built from a tool of `tools`."""
    lines = [f"To call a tool, write {dialect.call_instructions}, for example:"]
    if example := _example_tool(tools, dialect):
        lines.append(dialect.format_call(example.name, example_arguments(example.input_schema)))
    else:
        lines.append(dialect.format_call("tool_name", {"parameter": "value"}))
    lines += [
        "- Use only the tools and parameters listed above; leave out optional parameters you don't need.",
        f"- You may write several {dialect.call_noun}s in one reply when the calls don't depend on each "
        "other.",
        "- After your calls, stop and wait. Each result comes back to you in a <tool_result> block.",
        "- Never write a <tool_result> yourself and never invent, guess or predict a tool's result: "
        "wait for it.",
        "- If no tool is needed, answer directly.",
    ]
    return "\n".join(lines)


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Plausible arguments for a schema: its required parameters only, each with a value that fits."""
    # A required recursive property can never be satisfied in full: an empty object ends the example.
    inlined = inline_refs(schema, lambda _ref, _target: {"type": "object"})
    value = _example_value(inlined, 0)
    return value if isinstance(value, dict) else {}


def _example_tool(tools: Sequence[ToolSpec], dialect: CallWriter) -> ToolSpec | None:
    """The tool whose example call is the shortest one that still shows arguments (ties: catalog order)."""
    candidates = [tool for tool in tools if example_arguments(tool.input_schema)] or list(tools)
    if not candidates:
        return None
    return min(candidates, key=lambda t: len(dialect.format_call(t.name, example_arguments(t.input_schema))))


def _example_value(schema: Mapping[str, Any], depth: int) -> Any:
    for keyword in ("const", "default"):
        if schema.get(keyword) is not None:
            return schema[keyword]
    if isinstance(examples := schema.get("examples"), list) and examples:
        return examples[0]
    if isinstance(enum := schema.get("enum"), list) and enum:
        return enum[0]
    variants = schema.get("anyOf") or schema.get("oneOf") or schema.get("allOf")
    if isinstance(variants, list):
        usable = [v for v in variants if isinstance(v, Mapping) and v.get("type") != "null"]
        if usable:
            return _example_value({**schema, **usable[0], "anyOf": None, "oneOf": None, "allOf": None}, depth)
    type_ = schema.get("type")
    if isinstance(type_, list):
        type_ = next((t for t in type_ if t != "null"), "null")
    if type_ == "object" or (type_ is None and "properties" in schema):
        return _example_object(schema, depth)
    if type_ == "array":
        items = schema.get("items")
        item_schema = items if isinstance(items, Mapping) else {"type": "string"}
        count = max(1, schema.get("minItems", 1) if isinstance(schema.get("minItems"), int) else 1)
        return [_example_value(item_schema, depth + 1) for _ in range(count)]
    if type_ in ("integer", "number"):
        return _example_number(schema, integer=type_ == "integer")
    if type_ == "boolean":
        return True
    if type_ == "null":
        return None
    return _FORMAT_EXAMPLES.get(str(schema.get("format")), "example")


def _example_object(schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
    properties = schema.get("properties")
    if depth >= _MAX_EXAMPLE_DEPTH or not isinstance(properties, Mapping):
        return {}
    required = schema.get("required") or []
    return {
        name: _example_value(sub, depth + 1)
        for name, sub in properties.items()
        if name in required and isinstance(sub, Mapping)
    }


def _example_number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    low = schema.get("minimum")
    exclusive_low = schema.get("exclusiveMinimum")
    value: float = 1
    if isinstance(low, int | float):
        value = low
    elif isinstance(exclusive_low, int | float) and not isinstance(exclusive_low, bool):
        value = exclusive_low + 1
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if isinstance(high, int | float) and not isinstance(high, bool) and value > high:
        value = high
    return int(value) if integer or float(value).is_integer() else value
