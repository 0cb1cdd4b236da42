"""Argument values written as bare text (`qwen3_xml`, `glm`), typed by the parameter's JSON Schema.

    typed_value("3", {"type": "integer"}) -> 3
    typed_value("3", {"type": "string"})  -> "3"
    typed_value("3", None)                -> "3"    (no schema: text stays text...)
    typed_value('{"a": 1}', None)         -> {"a": 1}  (...but an object or array written as JSON is one)

With a schema: `integer` and `number` read a JSON number (an integral `3.0` is an integer), `boolean`
reads `true`/`false` in any case (templates print Python's `True`), `null` reads `null` or `None`, and
`object`/`array` read JSON (repaired like call JSON, and only when it gives that kind of value), and
`string` takes the text as it is.

A union (a type list, `anyOf`, `oneOf`, OpenAPI's `nullable`) tries its types from the most particular
to the least, whatever order the schema lists them in: null, boolean, integer, number, object, array,
and string last, since a string takes any text. So `["string", "null"]` reads `null` as null and
anything else as text, and `["string", "integer"]` reads `5` as 5 but `007` as "007". A value that fits
no type, an unknown parameter or a schema without a type: the no-schema rule. Text is never trimmed
here: what is layout (Qwen3's newline after the tag) the dialect removes before.

Without a schema, only a value that is clearly a JSON object or array (it starts with `{` or `[` and is
valid JSON) is decoded: numbers, `true` and `null` stay text, since a string parameter may well hold
`007` or `true`, and the tool's schema (toolbridge passes it whenever it knows the tools) says which.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from toolbridge._values import MAX_INT_DIGITS
from toolbridge.parsing._calls import CallProblem, decode_json

__all__ = ["typed_value", "value_text"]

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_UNION_ORDER = ("null", "boolean", "integer", "number", "object", "array", "string")
_NOT_CONVERTED = object()


def typed_value(text: str, schema: Mapping[str, Any] | None) -> Any:
    """`text` as the value `schema` asks for; the text itself when it fits none of its types."""
    for type_name in _types(schema):
        value = _convert(text, type_name)
        if value is not _NOT_CONVERTED:
            return value
    return _untyped(text)


def _types(schema: Mapping[str, Any] | None) -> list[str]:
    """The JSON types `schema` allows, the most particular first (`_UNION_ORDER`)."""
    allowed = _listed_types(schema)
    return [type_name for type_name in _UNION_ORDER if type_name in allowed]


def _listed_types(schema: Mapping[str, Any] | None) -> set[str]:
    if schema is None:
        return set()
    types: set[str] = set()
    declared = schema.get("type")
    if isinstance(declared, str):
        types.add(declared)
    elif isinstance(declared, list):
        types.update(t for t in declared if isinstance(t, str))
    if schema.get("nullable") is True:
        types.add("null")
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, Mapping):
                    types |= _listed_types(option)
    return types


def _convert(text: str, type_name: str) -> Any:
    if type_name == "string":
        return text
    word = text.strip()
    if type_name in ("integer", "number"):
        return _number(word, integer=type_name == "integer")
    if type_name == "boolean":
        lowered = word.lower()
        return True if lowered == "true" else False if lowered == "false" else _NOT_CONVERTED
    if type_name == "null":
        return None if word in ("null", "None", "NULL", "Null") else _NOT_CONVERTED
    if type_name in ("object", "array"):
        if not word.startswith("{" if type_name == "object" else "["):
            return _NOT_CONVERTED
        try:
            value = decode_json(word)
        except CallProblem:
            return _NOT_CONVERTED
        return value if isinstance(value, dict if type_name == "object" else list) else _NOT_CONVERTED
    return _NOT_CONVERTED


def _number(word: str, *, integer: bool) -> Any:
    match = _NUMBER.fullmatch(word)
    if match is None or len(word) > MAX_INT_DIGITS:
        return _NOT_CONVERTED
    if match.group(1) is None and match.group(2) is None:
        return int(word)
    value = float(word)
    if integer:
        return int(value) if value.is_integer() and abs(value) < 2**63 else _NOT_CONVERTED
    return value if value == value and abs(value) != float("inf") else _NOT_CONVERTED


def _untyped(text: str) -> Any:
    word = text.strip()
    if word[:1] in ("{", "[") and word[-1:] in ("}", "]"):
        try:
            return json.loads(word)
        except (ValueError, RecursionError):
            return text
    return text


def value_text(value: Any) -> str:
    """A value as the bare-text dialects write it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
