"""The calling convention: what the model is told, and an example call that is real and valid."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema
import pytest

from toolbridge.parsing import call_format
from toolbridge.prompting import example_arguments, render_calling_convention
from toolbridge.types import ToolSpec

HERMES = call_format("hermes")

TOOL_CALL = re.compile(r"<tool_call>(\{.*?\})</tool_call>", re.DOTALL)


def example_call(text: str) -> dict[str, Any]:
    bodies = TOOL_CALL.findall(text)
    assert len(bodies) == 1, text
    call = json.loads(bodies[0])
    assert isinstance(call, dict)
    return call


def test_the_convention_explains_the_format_and_the_rules(corpus: list[ToolSpec]) -> None:
    text = render_calling_convention(corpus, HERMES)
    assert "<tool_call>" in text
    assert '"name"' in text
    assert '"arguments"' in text
    assert "several <tool_call> blocks in one reply" in text
    assert "<tool_result>" in text
    assert "never invent" in text
    assert "wait" in text


def test_the_model_is_never_asked_for_a_source(corpus: list[ToolSpec]) -> None:
    text = render_calling_convention(corpus, HERMES)
    assert "source" not in text.lower()
    assert set(example_call(text)) == {"name", "arguments"}


def test_the_example_is_a_valid_hermes_call_to_a_real_tool(corpus: list[ToolSpec]) -> None:
    call = example_call(render_calling_convention(corpus, HERMES))
    tools = {tool.name: tool for tool in corpus}
    assert call["name"] in tools
    assert call["arguments"]
    jsonschema.validate(call["arguments"], tools[call["name"]].input_schema)


def test_the_example_prefers_a_tool_with_arguments() -> None:
    tools = [
        ToolSpec(name="ping"),
        ToolSpec(
            name="get_current_time",
            input_schema={
                "type": "object",
                "properties": {"timezone": {"type": "string"}},
                "required": ["timezone"],
            },
        ),
    ]
    assert example_call(render_calling_convention(tools, HERMES)) == {
        "name": "get_current_time",
        "arguments": {"timezone": "example"},
    }


def test_without_tools_the_example_is_generic() -> None:
    assert example_call(render_calling_convention([], HERMES))["name"] == "tool_name"


def test_hermes_writes_one_line_of_json_between_the_tags() -> None:
    assert (
        HERMES.format_call("t", {"q": "café"})
        == '<tool_call>{"name": "t", "arguments": {"q": "café"}}</tool_call>'
    )


def required(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"p": schema}, "required": ["p"]}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, "example"),
        ({"type": "string", "enum": ["line", "bar"]}, "line"),
        ({"type": "string", "default": "A1"}, "A1"),
        ({"const": "fast"}, "fast"),
        ({"type": "string", "examples": ["Europe/Paris"]}, "Europe/Paris"),
        ({"type": "string", "format": "date-time"}, "2025-01-31T09:30:00Z"),
        ({"type": "string", "format": "date"}, "2025-01-31"),
        ({"type": "string", "format": "email"}, "user@example.com"),
        ({"type": "string", "format": "uri"}, "https://example.com"),
        ({"type": "integer"}, 1),
        ({"type": "integer", "minimum": 5}, 5),
        ({"type": "integer", "exclusiveMinimum": 5}, 6),
        ({"type": "number", "maximum": 0.5}, 0.5),
        ({"type": "boolean"}, True),
        ({"type": ["string", "null"]}, "example"),
        ({"anyOf": [{"type": "null"}, {"type": "integer"}]}, 1),
        ({"type": "array", "items": {"type": "integer"}, "minItems": 2}, [1, 1]),
        ({"type": "array"}, ["example"]),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "required": ["a"],
            },
            {"a": "example"},
        ),
    ],
)
def test_example_arguments_fit_the_schema(schema: dict[str, Any], expected: Any) -> None:
    arguments = example_arguments(required(schema))
    assert arguments == {"p": expected}
    jsonschema.validate(arguments, required(schema))


def test_example_arguments_hold_only_required_parameters_and_resolve_refs() -> None:
    schema = {
        "type": "object",
        "$defs": {
            "Kind": {"enum": ["a", "b"]},
            "Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}},
                "required": ["next"],
            },
        },
        "properties": {
            "kind": {"$ref": "#/$defs/Kind"},
            "node": {"$ref": "#/$defs/Node"},
            "extra": {"type": "string"},
        },
        "required": ["kind", "node"],
    }
    assert example_arguments(schema) == {"kind": "a", "node": {"next": {}}}


def test_example_arguments_are_valid_for_every_tool_of_the_corpus(corpus: list[ToolSpec]) -> None:
    for tool in corpus:
        jsonschema.validate(example_arguments(tool.input_schema), tool.input_schema)
