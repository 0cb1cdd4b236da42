"""Bare-text argument values (qwen3_xml, glm) typed by the parameter's JSON Schema."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge.parsing._typed_values import typed_value

INTEGER = {"type": "integer"}
NUMBER = {"type": "number"}
BOOLEAN = {"type": "boolean"}
NULL = {"type": "null"}
OBJECT = {"type": "object"}
ARRAY = {"type": "array"}
STRING = {"type": "string"}


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("3", INTEGER, 3),
        (" -12 ", INTEGER, -12),
        ("3.0", INTEGER, 3),  # integral
        ("3.5", INTEGER, "3.5"),  # not an integer: the text
        ("three", INTEGER, "three"),
        ("2.5", NUMBER, 2.5),
        ("1e3", NUMBER, 1000.0),
        ("7", NUMBER, 7),
        ("NaN", NUMBER, "NaN"),
        ("0x10", NUMBER, "0x10"),
        ("true", BOOLEAN, True),
        ("False", BOOLEAN, False),  # Jinja's `string` filter prints Python's booleans
        ("yes", BOOLEAN, "yes"),
        ("null", NULL, None),
        ("None", NULL, None),
        ('{"a": [1, {"b": null}]}', OBJECT, {"a": [1, {"b": None}]}),
        ("{'a': 1,}", OBJECT, {"a": 1}),  # repaired like call JSON
        ("[1, 2]", OBJECT, [1, 2]),  # the no-schema rule: clearly an array
        ("[1, 2]", ARRAY, [1, 2]),
        ("1, 2", ARRAY, "1, 2"),
        ('{"a": [1, 2}', OBJECT, '{"a": [1, 2}'),  # its brackets closed for it: no object
        ("3", STRING, "3"),
        ('{"a": 1}', STRING, '{"a": 1}'),
        ("\n  spaced  \n", STRING, "\n  spaced  \n"),  # strings are never trimmed here
    ],
)
def test_a_value_is_typed_by_its_schema(text: str, schema: dict[str, Any], expected: Any) -> None:
    value = typed_value(text, schema)
    assert value == expected
    assert type(value) is type(expected)


STRING_OR_NULL = {"type": ["string", "null"]}


@pytest.mark.parametrize(
    ("text", "schema", "expected"),
    [
        ("5", {"type": ["integer", "null"]}, 5),
        ("null", {"type": ["integer", "null"]}, None),
        ("null", STRING_OR_NULL, None),
        ("None", STRING_OR_NULL, None),
        ("null ", STRING_OR_NULL, None),
        ("nullable", STRING_OR_NULL, "nullable"),
        ("5", STRING_OR_NULL, "5"),
        ("null", {"type": ["null", "string"]}, None),
        ("null", {"anyOf": [{"type": "string"}, {"type": "null"}]}, None),
        ("null", {"oneOf": [{"type": "string", "maxLength": 9}, {"type": "null"}]}, None),
        ("null", {"type": "string", "nullable": True}, None),  # OpenAPI 3.0
        ("null", STRING, "null"),  # null is no value of a plain string
        # The most particular type first, whatever the schema's order: a string takes any text.
        ("5", {"type": ["string", "integer"]}, 5),
        ("007", {"type": ["string", "integer"]}, "007"),
        ("true", {"type": ["string", "boolean"]}, True),
        ("1", {"type": ["string", "boolean"]}, "1"),
        ("2.5", {"type": ["string", "integer", "number"]}, 2.5),
        ("[1]", {"type": ["string", "array"]}, [1]),
        ('{"a": 1}', {"anyOf": [{"type": "string"}, {"type": "object"}]}, {"a": 1}),
        ("[1, 2", {"type": ["string", "array"]}, "[1, 2"),  # JSON cut short is no array
        ("5", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, 5),
        ("five", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, "five"),
        ("[1]", {"oneOf": [{"type": "boolean"}, {"type": "array", "items": {}}]}, [1]),
        ("true", {"anyOf": [{"anyOf": [{"type": "boolean"}]}]}, True),
    ],
)
def test_unions_try_the_most_particular_type_first(text: str, schema: dict[str, Any], expected: Any) -> None:
    value = typed_value(text, schema)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3", "3"),
        ("true", "true"),
        ("null", "null"),
        ("007", "007"),
        ('{"a": 1}', {"a": 1}),
        (' [1, "x"] ', [1, "x"]),
        ("{not json}", "{not json}"),
        ("[1, 2", "[1, 2"),
        ("", ""),
    ],
)
def test_without_a_schema_only_json_objects_and_arrays_are_decoded(text: str, expected: Any) -> None:
    assert typed_value(text, None) == expected
    assert typed_value(text, {"description": "no type"}) == expected
    assert typed_value(text, {"$ref": "#/$defs/Thing"}) == expected


def test_a_huge_integer_stays_text() -> None:
    digits = "9" * 5000
    assert typed_value(digits, INTEGER) == digits
