"""Provider schemas: each obeys its target's rules, keeps accepting what the original accepts, and
leaves the original untouched."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from toolbridge.errors import UsageError
from toolbridge.prompting import (
    SchemaTarget,
    openai_strict_problems,
    openai_tool_definitions,
    transform_schema,
)
from toolbridge.types import ToolSpec

TARGETS: list[SchemaTarget] = ["openai", "openai_strict", "gemini", "anthropic"]

# Gemini's `Schema` object (function declarations' `parameters`), from its API reference.
GEMINI_ALLOWED = {
    "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties",
    "required", "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf",
    "propertyOrdering", "default", "items", "minimum", "maximum",
}  # fmt: skip
GEMINI_TYPES = {"string", "number", "integer", "boolean", "array", "object"}
# What OpenAI's Structured Outputs accept in strict mode.
OPENAI_STRICT_ALLOWED = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref",
    "$defs", "description", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "minItems", "maxItems",
}  # fmt: skip

RECURSIVE = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "Node": {
            "type": "object",
            "description": "A node",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            "required": ["value"],
            "additionalProperties": False,
        }
    },
    "properties": {"root": {"$ref": "#/$defs/Node", "description": "The tree"}},
    "required": ["root"],
}

# Arguments each original schema accepts; every transformed schema must accept them too.
INSTANCES: dict[str, list[dict[str, Any]]] = {
    "read_data_from_excel": [
        {"filepath": "a.xlsx", "sheet_name": "Sheet1"},
        {
            "filepath": "a.xlsx",
            "sheet_name": "Sheet1",
            "start_cell": "B2",
            "end_cell": None,
            "preview_only": True,
        },
    ],
    "create_pivot_table": [
        {"filepath": "a.xlsx", "sheet_name": "S", "data_range": "A1:C9", "rows": ["r"], "values": ["v"]},
        {"filepath": "a", "sheet_name": "S", "data_range": "A1", "rows": [], "values": [], "columns": None},
    ],
    "insert_rows": [{"filepath": "a.xlsx", "sheet_name": "S", "start_row": 3, "count": 2}],
    "format_range": [
        {"filepath": "a.xlsx", "sheet_name": "S", "start_cell": "A1", "protection": {"locked": True}},
        {"filepath": "a.xlsx", "sheet_name": "S", "start_cell": "A1", "font_size": 12, "bold": True},
    ],
    "write_data_to_excel": [{"filepath": "a.xlsx", "sheet_name": "S", "data": [[1, "a", None], [True]]}],
    "convert_time": [{"source_timezone": "Europe/Paris", "time": "09:30", "target_timezone": "Asia/Tokyo"}],
    "edit_file": [{"path": "notes.txt", "edits": [{"oldText": "a", "newText": "b"}], "dryRun": True}],
    "build_report": [
        {
            "filepath": "sales.xlsx",
            "sheet_name": "Data",
            "sections": [{"heading": "All"}],
            "output": {"kind": "sheet", "target_sheet": "Report"},
        },
        {
            "filepath": "sales.xlsx",
            "sheet_name": "Data",
            "period": {"start": "2025-01-01", "end": "2025-03-31"},
            "filters": [{"column": "Region", "op": "eq", "value": "EU"}, {"column": "Net", "value": 3.5}],
            "sections": [
                {
                    "heading": "Totals",
                    "metrics": [{"column": "Net", "aggregation": "sum", "label": None}],
                    "children": [{"heading": "By month", "children": [{"heading": "January"}]}],
                }
            ],
            "output": {"kind": "file", "path": "out.pdf", "file_format": "pdf"},
            "top_n": 10,
            "threshold": 0.25,
            "notify_email": "boss@example.com",
            "tags": ["q1", "eu-sales"],
            "generated_at": "2025-04-01T08:00:00Z",
        },
    ],
}


def subschemas(schema: Any) -> Iterator[dict[str, Any]]:
    """Every schema position in a schema (property names are never taken for keywords)."""
    if not isinstance(schema, dict):
        return
    yield schema
    for key, value in schema.items():
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(value, dict):
            for sub in value.values():
                yield from subschemas(sub)
        elif key in ("anyOf", "oneOf", "allOf", "prefixItems") and isinstance(value, list):
            for sub in value:
                yield from subschemas(sub)
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            yield from subschemas(value)


def containers(value: Any) -> Iterator[Any]:
    if isinstance(value, dict | list):
        yield value
        for child in value.values() if isinstance(value, dict) else value:
            yield from containers(child)


def tool_named(corpus: list[ToolSpec], name: str) -> ToolSpec:
    return next(tool for tool in corpus if tool.name == name)


def all_schemas(corpus: list[ToolSpec]) -> list[dict[str, Any]]:
    return [tool.input_schema for tool in corpus] + [RECURSIVE]


# -- purity ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", TARGETS)
def test_the_input_is_never_changed_nor_shared(corpus: list[ToolSpec], target: SchemaTarget) -> None:
    for schema in all_schemas(corpus):
        before = copy.deepcopy(schema)
        result = transform_schema(schema, target)
        assert schema == before
        shared = {id(c) for c in containers(schema)} & {id(c) for c in containers(result)}
        assert not shared, "the output must not alias the input's dicts and lists"


# -- openai and anthropic --------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["openai", "anthropic"])
def test_plain_targets_pass_the_schema_through_without_another_drafts_dollar_schema(
    corpus: list[ToolSpec], target: SchemaTarget
) -> None:
    for schema in all_schemas(corpus):
        draft = schema.get("$schema", "")
        expected = {k: v for k, v in schema.items() if k != "$schema" or "2020-12" in draft}
        assert transform_schema(schema, target) == expected


@pytest.mark.parametrize("target", ["openai", "anthropic"])
def test_plain_targets_keep_json_schema_2020_12_keywords(target: SchemaTarget) -> None:
    """`$schema`, `$defs` with `$anchor`, `additionalProperties`, `if`/`then`/`else` and composition below
    the root reach the model as the server wrote them (the conformance harness's 2020-12 fixture keywords)."""
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {"$anchor": "addr", "type": "object", "properties": {"city": {"type": "string"}}}
        },
        "properties": {
            "home": {"$ref": "#addr"},
            "kind": {"anyOf": [{"const": "a"}, {"const": "b"}]},
            "code": {"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"type": "integer"}},
        },
        "additionalProperties": False,
    }
    assert transform_schema(schema, target) == schema


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"properties": {"a": {"type": "string"}}},
        {"anyOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]}, {"properties": {"b": {}}}]},
        {"allOf": [{"properties": {"a": {"type": "string"}}, "required": ["a"]}]},
    ],
    ids=["empty", "no type", "root union", "root allOf"],
)
def test_every_target_gets_an_object_at_the_root(schema: dict[str, Any], target: SchemaTarget) -> None:
    result = transform_schema(schema, target)
    assert result["type"] == "object"
    assert "anyOf" not in result
    assert "oneOf" not in result
    assert "allOf" not in result
    assert isinstance(result["properties"], dict)


# -- gemini ----------------------------------------------------------------------------------------


def test_gemini_schemas_use_only_what_gemini_accepts(corpus: list[ToolSpec]) -> None:
    for schema in all_schemas(corpus):
        for node in subschemas(transform_schema(schema, "gemini")):
            assert set(node) <= GEMINI_ALLOWED, set(node) - GEMINI_ALLOWED
            assert "type" not in node or node["type"] in GEMINI_TYPES
            assert all(isinstance(value, str) for value in node.get("enum", []))
            if isinstance(node.get("properties"), dict):
                assert set(node.get("required", [])) <= set(node["properties"])


def one(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"p": schema}}


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": ["string", "null"]}, {"type": "string", "nullable": True}),
        (
            {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            {"type": "integer", "nullable": True, "default": None},
        ),
        ({"type": ["string", "integer"]}, {"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        (
            {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        ),
        ({"const": "fast"}, {"type": "string", "enum": ["fast"]}),
        ({"enum": ["a", None]}, {"type": "string", "enum": ["a"], "nullable": True}),
        ({"type": "integer", "enum": [1, 2]}, {"type": "integer", "description": "One of 1, 2"}),
        ({"type": "string", "format": "email"}, {"type": "string", "description": "Format: email"}),
        ({"type": "string", "format": "date-time"}, {"type": "string", "format": "date-time"}),
        (
            {"type": "number", "exclusiveMinimum": 0, "description": "Share"},
            {"type": "number", "description": "Share (greater than 0)"},
        ),
        (
            {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            {"type": "array", "items": {"type": "string"}, "description": "Items must be unique"},
        ),
        (
            {
                "type": "object",
                "title": "T",
                "additionalProperties": False,
                "properties": {"a": {"type": "string"}},
                "required": ["a", "ghost"],
            },
            {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        ),
        ({"type": "string", "examples": ["x", "y"]}, {"type": "string", "example": "x"}),
        (
            {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}], "description": "D"},
            {"type": "object", "properties": {"a": {"type": "string"}}, "description": "D"},
        ),
    ],
    ids=[
        "type list null",
        "optional",
        "type list union",
        "oneOf",
        "const",
        "enum null",
        "integer enum",
        "unsupported format",
        "date-time",
        "exclusive bound",
        "uniqueItems",
        "object plumbing",
        "examples",
        "allOf",
    ],
)
def test_gemini_conversions(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert transform_schema(one(schema), "gemini")["properties"]["p"] == expected


def test_gemini_inlines_refs_and_cuts_recursion() -> None:
    result = transform_schema(RECURSIVE, "gemini")
    root = result["properties"]["root"]
    assert root["description"] == "The tree"
    assert root["properties"]["value"] == {"type": "integer"}
    assert root["properties"]["children"]["items"] == {
        "type": "object",
        "description": "A node (same structure as its parent)",
    }
    assert "$defs" not in result


# -- openai strict ---------------------------------------------------------------------------------


def test_strict_schemas_close_every_object_and_require_every_property(corpus: list[ToolSpec]) -> None:
    checked = 0
    for schema in all_schemas(corpus):
        if openai_strict_problems(schema):
            continue
        checked += 1
        result = transform_schema(schema, "openai_strict")
        for node in subschemas(result):
            assert set(node) <= OPENAI_STRICT_ALLOWED, set(node) - OPENAI_STRICT_ALLOWED
            if "$ref" in node:
                assert set(node) == {"$ref"}
                assert node["$ref"] == "#" or node["$ref"].removeprefix("#/$defs/") in result["$defs"]
            if node.get("type") == "object" or "properties" in node:
                assert node["additionalProperties"] is False
                assert node["required"] == list(node["properties"])
    assert checked >= 26


def test_strict_problems_name_free_form_objects_and_untyped_values(corpus: list[ToolSpec]) -> None:
    with_problems = {tool.name for tool in corpus if openai_strict_problems(tool.input_schema)}
    assert with_problems == {"format_range", "write_data_to_excel"}
    assert openai_strict_problems(tool_named(corpus, "write_data_to_excel").input_schema) == [
        "#/properties/data/items/items: a schema without a type (any value) cannot be strict"
    ]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "string"}, {"type": ["string", "null"]}),
        ({"type": "string", "default": "A1"}, {"type": ["string", "null"], "description": 'Default: "A1"'}),
        (
            {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        ),
        (
            {"type": "string", "enum": ["a", "b"]},
            {"anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
        ),
        (
            {"oneOf": [{"type": "string"}, {"type": "integer"}]},
            {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
        ),
        (
            {"type": "string", "format": "binary", "maxLength": 9},
            {"type": ["string", "null"], "description": "Format: binary; length at most 9"},
        ),
    ],
    ids=["optional string", "default", "already nullable", "enum", "oneOf", "unsupported keywords"],
)
def test_strict_makes_optional_properties_nullable(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    result = transform_schema(one(schema), "openai_strict")
    assert result["required"] == ["p"]
    assert result["properties"]["p"] == expected


def test_strict_keeps_recursive_refs_in_defs_without_siblings() -> None:
    result = transform_schema(RECURSIVE, "openai_strict")
    assert result["properties"]["root"] == {"description": "The tree", "anyOf": [{"$ref": "#/$defs/Node"}]}
    node = result["$defs"]["Node"]
    assert node["required"] == ["value", "children"]
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}


# -- the transformed schemas still accept what the originals accept --------------------------------


def as_json_schema(gemini: Any) -> Any:
    """Gemini's dialect in plain JSON Schema terms: `nullable: true` means `null` is also fine."""
    if isinstance(gemini, list):
        return [as_json_schema(item) for item in gemini]
    if not isinstance(gemini, dict):
        return gemini
    converted = {
        key: (
            {name: as_json_schema(sub) for name, sub in value.items()}
            if key == "properties"
            else as_json_schema(value)
            if key in ("items", "anyOf")
            else value
        )
        for key, value in gemini.items()
        if key != "nullable"
    }
    return {"anyOf": [converted, {"type": "null"}]} if gemini.get("nullable") else converted


def with_explicit_nulls(instance: Any, schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """What a model in strict mode sends for `instance`: every optional property present, as null."""
    if "$ref" in schema:
        schema = root if schema["$ref"] == "#" else root["$defs"][schema["$ref"].removeprefix("#/$defs/")]
    candidates = [schema, *schema.get("anyOf", [])]
    candidates = [root["$defs"][c["$ref"].split("/")[-1]] if "$ref" in c else c for c in candidates]
    if isinstance(instance, dict):
        for candidate in candidates:
            properties = candidate.get("properties")
            if properties is not None and set(instance) <= set(properties):
                return {
                    name: with_explicit_nulls(instance[name], sub, root) if name in instance else None
                    for name, sub in properties.items()
                }
    if isinstance(instance, list):
        for candidate in candidates:
            if "items" in candidate:
                return [with_explicit_nulls(item, candidate["items"], root) for item in instance]
    return instance


@pytest.mark.parametrize("target", TARGETS)
def test_transformed_schemas_accept_what_the_original_accepts(
    corpus: list[ToolSpec], target: SchemaTarget
) -> None:
    validated = 0
    for name, instances in INSTANCES.items():
        original = tool_named(corpus, name).input_schema
        if target == "openai_strict" and openai_strict_problems(original):
            continue
        result = transform_schema(original, target)
        for instance in instances:
            jsonschema.validate(instance, original)
            if target == "gemini":
                jsonschema.validate(instance, as_json_schema(result))
            elif target == "openai_strict":
                jsonschema.validate(with_explicit_nulls(instance, result, result), result)
            else:
                jsonschema.validate(instance, result)
            validated += 1
    assert validated >= 9


def test_the_recursive_schema_accepts_deep_trees_in_every_target() -> None:
    tree = {"root": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}}
    jsonschema.validate(tree, RECURSIVE)
    for target in TARGETS:
        jsonschema.Draft202012Validator.check_schema(transform_schema(RECURSIVE, target))
    jsonschema.validate(tree, as_json_schema(transform_schema(RECURSIVE, "gemini")))
    strict = transform_schema(RECURSIVE, "openai_strict")
    jsonschema.validate(with_explicit_nulls(tree, strict, strict), strict)


# -- OpenAI tools entries --------------------------------------------------------------------------


def test_openai_tool_definitions_have_the_chat_completions_shape(corpus: list[ToolSpec]) -> None:
    definitions = openai_tool_definitions(corpus)
    assert [d["function"]["name"] for d in definitions] == [t.name for t in corpus]
    first = definitions[0]
    assert first == {
        "type": "function",
        "function": {
            "name": corpus[0].name,
            "description": corpus[0].description,
            "parameters": transform_schema(corpus[0].input_schema, "openai"),
        },
    }
    assert "description" not in openai_tool_definitions([ToolSpec(name="bare")])[0]["function"]


def test_strict_definitions_fall_back_per_tool(corpus: list[ToolSpec]) -> None:
    strict_by_name = {
        d["function"]["name"]: d["function"]["strict"] for d in openai_tool_definitions(corpus, strict=True)
    }
    assert strict_by_name["format_range"] is False
    assert strict_by_name["write_data_to_excel"] is False
    assert strict_by_name["build_report"] is True
    assert sum(strict_by_name.values()) == len(corpus) - 2


def test_an_unknown_target_is_a_mistake() -> None:
    with pytest.raises(UsageError, match="unknown schema target"):
        transform_schema({}, "mistral")  # type: ignore[arg-type]
