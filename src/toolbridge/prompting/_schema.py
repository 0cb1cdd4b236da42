"""Provider-specific input schemas, made from the original JSON Schema in one place.

Providers accept different parts of JSON Schema. Gemini's function declarations take an OpenAPI subset
(no `$ref`, no `additionalProperties`, string-only enums); OpenAI's strict mode wants every object closed
and every property required; OpenAI and Anthropic want an object at the root. Each transformer keeps the
meaning as far as the target allows: what it cannot express as schema it says in the description, so the
model still reads it. All functions are pure: the input is never mutated and never shared.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from toolbridge.errors import UsageError
from toolbridge.prompting._refs import (
    JsonSchema,
    inline_refs,
    inline_refs_keeping_recursive,
    map_subschemas,
    resolve_ref,
)
from toolbridge.types import ToolSpec

__all__ = [
    "SchemaTarget",
    "openai_strict_problems",
    "openai_tool_definitions",
    "transform_schema",
]

SchemaTarget = Literal["openai", "openai_strict", "gemini", "anthropic"]

GEMINI_KEYWORDS = frozenset(
    {
        "anyOf",
        "default",
        "description",
        "enum",
        "example",
        "format",
        "items",
        "maxItems",
        "maxLength",
        "maxProperties",
        "maximum",
        "minItems",
        "minLength",
        "minProperties",
        "minimum",
        "nullable",
        "pattern",
        "properties",
        "propertyOrdering",
        "required",
        "title",
        "type",
    }
)
"""The keywords of Gemini's `Schema` object; anything else in a function declaration is rejected."""

_GEMINI_FORMATS = {
    "string": {"date-time", "enum"},
    "number": {"float", "double"},
    "integer": {"int32", "int64"},
}

OPENAI_STRICT_KEYWORDS = frozenset(
    {
        "$defs",
        "$ref",
        "additionalProperties",
        "anyOf",
        "const",
        "description",
        "enum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "format",
        "items",
        "maxItems",
        "maximum",
        "minItems",
        "minimum",
        "multipleOf",
        "pattern",
        "properties",
        "required",
        "type",
    }
)
"""What OpenAI's strict mode (Structured Outputs) accepts; other keywords are moved to the description."""

_OPENAI_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_OPENAI_MAX_NESTING = 10
_NOTED_KEYWORDS = {
    "default": "default: {}",
    "minLength": "length at least {}",
    "maxLength": "length at most {}",
    "minItems": "at least {} items",
    "maxItems": "at most {} items",
    "uniqueItems": "items must be unique",
    "minProperties": "at least {} keys",
    "maxProperties": "at most {} keys",
    "multipleOf": "a multiple of {}",
    "exclusiveMinimum": "greater than {}",
    "exclusiveMaximum": "less than {}",
    "format": "format: {}",
}
"""Constraints worth keeping as words when the target cannot keep them as schema."""


_DRAFT_2020_12 = (
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2020-12/schema#",
)


def transform_schema(schema: Mapping[str, Any], target: SchemaTarget) -> JsonSchema:
    """The input schema `target` accepts, made from `schema` (which is left untouched).

    - `openai`, `anthropic`: the schema as is, with an object at the root; a `$schema` is kept when it names
      2020-12 (the dialect both read, and MCP's), dropped when it names another draft they do not follow.
    - `gemini`: refs inlined (recursion cut to a plain object), unsupported keywords removed or turned into
      `nullable`, `anyOf`, string enums and description notes.
    - `openai_strict`: every object closed and every property required, optional ones made nullable
      (send no argument for a null the model gives to an originally optional property); recursive refs
      kept in `$defs`. Where `openai_strict_problems` finds problems, OpenAI rejects the result: use
      `openai` for that tool instead.
    """
    if target in ("openai", "anthropic"):
        plain = _copy(schema)
        if plain.get("$schema") not in _DRAFT_2020_12:
            plain.pop("$schema", None)
        return _object_root(plain)
    if target == "gemini":
        inlined = inline_refs(schema, _gemini_recursion_stub)
        gemini: JsonSchema = _gemini(_object_root(inlined))
        return gemini
    if target == "openai_strict":
        strict: JsonSchema = _openai_strict(_object_root(inline_refs_keeping_recursive(schema)))
        return strict
    raise UsageError(f"unknown schema target {target!r}: use one of openai, openai_strict, gemini, anthropic")


def openai_tool_definitions(tools: Sequence[ToolSpec], *, strict: bool = False) -> list[JsonSchema]:
    """Tools as OpenAI Chat Completions `tools` entries.

    With `strict`, each tool whose schema allows it gets strict mode; the others are sent plain.
    """
    definitions = []
    for tool in tools:
        use_strict = strict and not openai_strict_problems(tool.input_schema)
        function: JsonSchema = {"name": tool.name}
        if tool.description:
            function["description"] = tool.description
        target: SchemaTarget = "openai_strict" if use_strict else "openai"
        function["parameters"] = transform_schema(tool.input_schema, target)
        if strict:
            function["strict"] = use_strict
        definitions.append({"type": "function", "function": function})
    return definitions


def openai_strict_problems(schema: Mapping[str, Any]) -> list[str]:
    """Why OpenAI's strict mode cannot take this schema (empty when it can), each with where it is."""
    problems: list[str] = []

    def check(node: Any, path: str, depth: int) -> None:
        if not isinstance(node, Mapping):
            problems.append(f"{path}: boolean schemas are not supported")
            return
        if depth > _OPENAI_MAX_NESTING:
            problems.append(f"{path}: nested deeper than {_OPENAI_MAX_NESTING} levels")
            return
        if not ({"type", "anyOf", "oneOf", "allOf", "enum", "const", "$ref"} & node.keys()):
            problems.append(f"{path}: a schema without a type (any value) cannot be strict")
        if _is_object(node) and not node.get("properties") and node.get("additionalProperties") is not False:
            problems.append(f"{path}: an object with free-form keys cannot be strict")
        if "patternProperties" in node:
            problems.append(f"{path}: patternProperties are not supported")
        for key, value in node.items():
            if key == "properties" and isinstance(value, Mapping):
                for name, sub in value.items():
                    check(sub, f"{path}/properties/{name}", depth + 1)
            elif key in ("anyOf", "oneOf", "allOf") and isinstance(value, list):
                for index, sub in enumerate(value):
                    check(sub, f"{path}/{key}/{index}", depth)
            elif key in ("items", "additionalProperties") and isinstance(value, Mapping):
                check(value, f"{path}/{key}", depth + 1)
            elif key == "$defs" and isinstance(value, Mapping):
                for name, sub in value.items():
                    check(sub, f"#/$defs/{name}", 0)

    check(_object_root(inline_refs_keeping_recursive(schema)), "#", 0)
    return problems


# -- Gemini -------------------------------------------------------------------------------------------


def _gemini_recursion_stub(_ref: str, target: Mapping[str, Any]) -> JsonSchema:
    # Gemini has no refs, so a recursive level is cut to an object whose shape the description tells.
    stub: JsonSchema = {"type": "object"}
    if isinstance(description := target.get("description"), str):
        stub["description"] = description
    return _with_notes(stub, ["same structure as its parent"])


def _gemini(node: Any) -> Any:
    if not isinstance(node, Mapping):
        return {}  # `true` (anything) has no Gemini spelling; an empty schema is the closest
    schema = map_subschemas(_merge_all_of(node), _gemini)
    notes: list[str] = []
    if "oneOf" in schema:
        schema["anyOf"] = [*schema.get("anyOf", []), *schema.pop("oneOf")]
    if "const" in schema:
        schema["enum"] = [schema.pop("const")]
    if isinstance(types := schema.get("type"), list):
        if "null" in types:
            schema["nullable"] = True
        kinds = [t for t in types if t != "null"]
        if len(kinds) == 1:
            schema["type"] = kinds[0]
        else:
            del schema["type"]
            if kinds:
                schema["anyOf"] = [{"type": kind} for kind in kinds]
    if isinstance(variants := schema.get("anyOf"), list):
        kept = [v for v in variants if not (isinstance(v, Mapping) and v.get("type") == "null")]
        if len(kept) < len(variants):
            schema["nullable"] = True
        del schema["anyOf"]
        if len(kept) == 1:
            schema = {**kept[0], **schema}  # the outer description and default are the more specific ones
        elif kept:
            schema["anyOf"] = kept
    if isinstance(values := schema.get("enum"), list):
        if None in values:
            schema["nullable"] = True
            values = [value for value in values if value is not None]
        if all(isinstance(value, str) for value in values):
            schema["enum"] = values
            schema["type"] = "string"
        else:
            del schema["enum"]  # Gemini enums are strings only: say the values instead
            notes.append("one of " + ", ".join(_json(value) for value in values))
    if isinstance(examples := schema.pop("examples", None), list) and examples:
        schema.setdefault("example", examples[0])
    fmt = schema.get("format")
    if fmt is not None and fmt not in _GEMINI_FORMATS.get(str(schema.get("type")), ()):
        notes.append(f"format: {schema.pop('format')}")
    notes.extend(_constraint_notes(schema, GEMINI_KEYWORDS))
    properties = schema.get("properties")
    if isinstance(properties, Mapping) and isinstance(schema.get("required"), list):
        # Gemini rejects a required name that is not a property.
        schema["required"] = [name for name in schema["required"] if name in properties]
    schema.pop("title", None)  # titles cost tokens and tell nothing the property name doesn't
    return _with_notes({k: v for k, v in schema.items() if k in GEMINI_KEYWORDS}, notes)


# -- OpenAI strict ------------------------------------------------------------------------------------


def _openai_strict(node: Any) -> Any:
    if not isinstance(node, Mapping):
        return {}
    schema = map_subschemas(_merge_all_of(node), _openai_strict)
    if "oneOf" in schema:
        schema["anyOf"] = [*schema.get("anyOf", []), *schema.pop("oneOf")]
    if "$ref" in schema and len(schema) > 1:
        # Strict mode allows no keywords beside `$ref`, but it does beside `anyOf`.
        schema["anyOf"] = [{"$ref": schema.pop("$ref")}]
    notes: list[str] = []
    if schema.get("format") is not None and schema["format"] not in _OPENAI_STRICT_FORMATS:
        notes.append(f"format: {schema.pop('format')}")
    notes.extend(_constraint_notes(schema, OPENAI_STRICT_KEYWORDS))
    if _is_object(schema):
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        schema["properties"] = {
            name: sub if name in required else _nullable(sub) for name, sub in properties.items()
        }
        schema["required"] = list(properties)
        schema["additionalProperties"] = False
    return _with_notes({k: v for k, v in schema.items() if k in OPENAI_STRICT_KEYWORDS}, notes)


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return schema
    type_ = schema.get("type")
    variants = schema.get("anyOf")
    if type_ == "null" or (isinstance(type_, list) and "null" in type_):
        return schema
    if isinstance(variants, list):
        if any(isinstance(v, Mapping) and v.get("type") == "null" for v in variants):
            return schema
        return {**schema, "anyOf": [*variants, {"type": "null"}]}
    if isinstance(type_, str) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [type_, "null"]}
    description = schema.get("description")
    inner = {k: v for k, v in schema.items() if k != "description"}
    wrapped: JsonSchema = {"anyOf": [inner, {"type": "null"}]}
    if description is not None:
        wrapped["description"] = description
    return wrapped


# -- shared -------------------------------------------------------------------------------------------


def _constraint_notes(schema: JsonSchema, allowed: frozenset[str]) -> list[str]:
    """Notes for the constraints `allowed` does not include; they are removed from `schema` by the caller."""
    notes = []
    for keyword, phrase in _NOTED_KEYWORDS.items():
        if keyword in schema and keyword not in allowed:
            value = schema[keyword]
            if value is None:
                continue  # `default: null` on an optional property says nothing
            if keyword in ("exclusiveMinimum", "exclusiveMaximum", "uniqueItems") and isinstance(value, bool):
                if keyword == "uniqueItems" and value:
                    notes.append(phrase)
                continue  # draft 4's exclusive flags: the minimum/maximum they qualify is kept
            shown = value if isinstance(value, str) and keyword == "format" else _json(value)
            notes.append(phrase.format(shown))
    return notes


def _is_object(schema: Mapping[str, Any]) -> bool:
    type_ = schema.get("type")
    return type_ == "object" or (isinstance(type_, list) and "object" in type_) or "properties" in schema


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _with_notes(schema: JsonSchema, notes: list[str]) -> JsonSchema:
    if not notes:
        return schema
    description = schema.get("description")
    joined = "; ".join(notes)
    schema["description"] = f"{description} ({joined})" if description else joined[0].upper() + joined[1:]
    return schema


def _merge_all_of(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """`allOf` folded into its parent: properties and required lists joined, other keywords kept first."""
    parts = schema.get("allOf")
    if not isinstance(parts, list):
        return schema
    if not all(isinstance(part, Mapping) and "$ref" not in part for part in parts):
        return schema
    merged: JsonSchema = {k: v for k, v in schema.items() if k != "allOf"}
    for part in parts:
        for key, value in _merge_all_of(part).items():
            if key == "properties" and isinstance(value, Mapping):
                merged["properties"] = {**value, **merged.get("properties", {})}
            elif key == "required" and isinstance(value, list):
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            else:
                merged.setdefault(key, value)
    return merged


def _object_root(schema: JsonSchema) -> JsonSchema:
    """Providers want `type: object` at the root and no union there: fold a root union into one object."""
    for keyword in ("anyOf", "oneOf"):
        variants = schema.get(keyword)
        if isinstance(variants, list) and variants:
            resolved = [
                resolve_ref(schema, v["$ref"]) if isinstance(v, Mapping) and "$ref" in v else v
                for v in variants
            ]
            objects = [v for v in resolved if isinstance(v, Mapping)]
            # Any of several shapes: every property may appear, only those all shapes require are required.
            properties: JsonSchema = {}
            for variant in objects:
                properties.update(variant.get("properties", {}))
            required = set.intersection(*(set(v.get("required", [])) for v in objects)) if objects else set()
            schema = {k: v for k, v in schema.items() if k != keyword}
            schema["properties"] = {**properties, **schema.get("properties", {})}
            schema["required"] = sorted(required | set(schema.get("required", [])))
    schema = dict(_merge_all_of(schema))
    if "type" not in schema:
        schema = {"type": "object", **schema}
    schema.setdefault("properties", {})
    return schema


def _copy(schema: Mapping[str, Any]) -> JsonSchema:
    return copy.deepcopy(dict(schema))
