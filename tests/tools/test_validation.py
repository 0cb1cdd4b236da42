"""Arguments against input schemas: obvious fixes are coerced and noted, everything else is explained."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolbridge.errors import ToolArgumentsError
from toolbridge.tools import validation
from toolbridge.tools.validation import validate_arguments
from toolbridge.types import ToolSpec

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "count": {"type": "integer", "minimum": 0},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "name": {"type": "string"},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        "mode": {"enum": ["fast", "slow"]},
        "filter": {
            "type": "object",
            "properties": {
                "max": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
        },
        "ids": {"type": "array", "items": {"type": "integer"}},
        "point": {"$ref": "#/$defs/Point"},
        "either": {"type": ["integer", "string"]},
    },
    "required": ["count", "name"],
    "additionalProperties": False,
    "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
}
TOOL = ToolSpec(name="search", input_schema=SCHEMA)
BASE = {"count": 1, "name": "n"}


@pytest.mark.parametrize(
    "arguments",
    [
        BASE,
        {**BASE, "ratio": 2, "flag": False, "limit": None, "mode": "slow"},
        {**BASE, "filter": {"max": 3, "tags": ["a"]}, "ids": [1, 2], "point": {"x": 1.5}},
        {**BASE, "count": 3.0},  # a whole float is an integer in JSON Schema
        {**BASE, "either": "text"},
    ],
)
def test_valid_arguments_pass_unchanged(arguments: dict[str, Any]) -> None:
    result, notes = validate_arguments(TOOL, arguments)
    assert result is arguments
    assert notes == []


@pytest.mark.parametrize(
    ("extra", "coerced", "note"),
    [
        (
            {"count": "3"},
            {"count": 3},
            "Argument 'count' was given as the string \"3\"; used the integer 3 instead.",
        ),
        ({"count": " 7 "}, {"count": 7}, "the integer 7"),
        ({"count": "-0"}, {"count": 0}, "the integer 0"),
        ({"count": "4.0"}, {"count": 4}, "the integer 4"),
        ({"ratio": "2.5"}, {"ratio": 2.5}, "used the number 2.5"),
        ({"ratio": "2"}, {"ratio": 2}, "used the number 2"),
        ({"ratio": "-1e3"}, {"ratio": -1000.0}, "used the number -1000.0"),
        ({"flag": "true"}, {"flag": True}, "used the boolean true"),
        ({"flag": "False"}, {"flag": False}, "used the boolean false"),
        ({"name": 5}, {"name": "5"}, 'given as the number 5; used the string "5"'),
        ({"name": 2.5}, {"name": "2.5"}, 'used the string "2.5"'),
        ({"limit": "10"}, {"limit": 10}, "Argument 'limit'"),
        ({"filter": {"max": "9"}}, {"filter": {"max": 9}}, "Argument 'filter.max'"),
        ({"filter": {"tags": [1, "b"]}}, {"filter": {"tags": ["1", "b"]}}, "Argument 'filter.tags[0]'"),
        ({"ids": [1, "2", 3]}, {"ids": [1, 2, 3]}, "Argument 'ids[1]'"),
        ({"point": {"x": "1.5"}}, {"point": {"x": 1.5}}, "Argument 'point.x'"),
        ({"ids": "[1, 2]"}, {"ids": [1, 2]}, "used the array [1, 2]"),
        ({"filter": '{"max": 2}'}, {"filter": {"max": 2}}, 'used the object {"max": 2}'),
    ],
)
def test_obvious_mismatches_are_coerced_and_noted(
    extra: dict[str, Any], coerced: dict[str, Any], note: str
) -> None:
    arguments = {**BASE, **extra}
    original = copy.deepcopy(arguments)
    result, notes = validate_arguments(TOOL, arguments)
    assert result == {**BASE, **coerced}
    assert len(notes) == 1
    assert note in notes[0]
    assert arguments == original, "the caller's arguments must not be mutated"


def test_several_fixes_are_all_noted() -> None:
    result, notes = validate_arguments(TOOL, {"count": "2", "name": 7, "flag": "true"})
    assert result == {"count": 2, "name": "7", "flag": True}
    assert len(notes) == 3


@pytest.mark.parametrize(
    ("arguments", "fragments"),
    [
        ({"count": "abc", "name": "n"}, ["at 'count': 'abc' is not of type 'integer'"]),
        ({"count": "-3", "name": "n"}, ["at 'count': '-3' is not of type 'integer'"]),  # coerced -3 < minimum
        ({"count": "2.5", "name": "n"}, ["at 'count': '2.5' is not of type 'integer'"]),
        ({"name": "n"}, ["'count' is a required property"]),
        ({}, ["'count' is a required property", "'name' is a required property"]),
        ({**BASE, "cnt": 1}, ["Additional properties are not allowed ('cnt' was unexpected)"]),
        ({**BASE, "flag": "yes"}, ["at 'flag': 'yes' is not of type 'boolean'"]),
        ({**BASE, "flag": 1}, ["at 'flag': 1 is not of type 'boolean'"]),
        ({**BASE, "ratio": "NaN"}, ["at 'ratio': 'NaN' is not of type 'number'"]),
        ({**BASE, "ratio": "inf"}, ["at 'ratio'"]),
        ({**BASE, "name": True}, ["at 'name': True is not of type 'string'"]),
        ({**BASE, "name": None}, ["at 'name': None is not of type 'string'"]),
        ({**BASE, "name": ["a"]}, ["at 'name': ['a'] is not of type 'string'"]),
        ({**BASE, "limit": "ten"}, ["at 'limit': 'ten' is not of type 'integer' or 'null'"]),
        ({**BASE, "mode": "medium"}, ["at 'mode': 'medium' is not one of ['fast', 'slow']"]),
        ({**BASE, "filter": {"max": "x"}}, ["at 'filter.max': 'x' is not of type 'integer'"]),
        ({**BASE, "ids": [1, "two"]}, ["at 'ids[1]': 'two' is not of type 'integer'"]),
        ({**BASE, "point": {}}, ["at 'point': 'x' is a required property"]),
        ({**BASE, "ids": "[1, 2"}, ["at 'ids': '[1, 2' is not of type 'array'"]),
        ({**BASE, "ids": '{"a": 1}'}, ["is not of type 'array'"]),
        ({**BASE, "ids": '["a"]'}, ["at 'ids'"]),  # decodes, but the items are still wrong
        # One fixable and one unfixable problem: nothing is coerced, the original values are reported.
        ({"count": "3", "name": "n", "mode": "x"}, ["at 'mode'", "at 'count': '3' is not of type 'integer'"]),
    ],
)
def test_other_mismatches_raise_a_message_a_model_can_act_on(
    arguments: dict[str, Any], fragments: list[str]
) -> None:
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments(TOOL, arguments)
    message = str(info.value)
    assert info.value.tool == "search"
    assert message.startswith("Invalid arguments for tool 'search': ")
    assert message.endswith("Call the tool again with corrected arguments.")
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({**BASE, "flag": None}, BASE),
        ({**BASE, "flag": None, "mode": None}, BASE),
        ({**BASE, "filter": {"max": None}}, {**BASE, "filter": {}}),
        ({**BASE, "flag": None, "count": "2"}, {**BASE, "count": 2}),
    ],
)
def test_a_null_for_an_optional_property_leaves_it_out(
    arguments: dict[str, Any], expected: dict[str, Any]
) -> None:
    """MCP reads a null argument as not given (the harness's `http-custom-headers` sends one for an
    optional boolean whose `Mcp-Param-*` header must then be left out); refusing it refused the call."""
    result, notes = validate_arguments(TOOL, arguments)
    assert result == expected
    assert any("was given as null; left it out (it is optional)" in note for note in notes)


def test_message_lists_the_expected_arguments_required_first() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments(TOOL, {})
    expected = str(info.value).split("Expected arguments: ", 1)[1]
    assert expected.startswith("count (integer, required), name (string, required), ratio (number, optional)")
    for part in [
        "limit (integer or null, optional)",
        'mode (one of "fast", "slow", optional)',
        "ids (array of integer, optional)",
        "point (object, optional)",
        "either (integer or string, optional)",
    ]:
        assert part in expected


def test_many_errors_are_capped() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(10)}}
    tool = ToolSpec(name="wide", input_schema=schema)
    with pytest.raises(ToolArgumentsError, match="and 5 more"):
        validate_arguments(tool, {f"p{i}": "x" for i in range(10)})


def test_long_values_are_shortened_in_messages() -> None:
    with pytest.raises(ToolArgumentsError) as info:
        validate_arguments(TOOL, {**BASE, "name": ["x" * 5000]})
    assert len(str(info.value)) < 1500


def test_a_tool_without_parameters() -> None:
    tool = ToolSpec(
        name="ping", input_schema={"type": "object", "properties": {}, "additionalProperties": False}
    )
    assert validate_arguments(tool, {}) == ({}, [])
    with pytest.raises(ToolArgumentsError, match=r"Expected arguments: none \(call it with an empty object"):
        validate_arguments(tool, {"x": 1})


@pytest.mark.parametrize(
    ("schema", "valid", "invalid"),
    [
        # Draft 2020-12 is the default: prefixItems is understood.
        ({"type": "object", "properties": {"p": {"prefixItems": [{"type": "integer"}]}}}, [1], ["a"]),
        # Draft 7, detected from $schema: `items` as a list means tuple validation.
        (
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"p": {"items": [{"type": "integer"}]}},
            },
            [1],
            ["a"],
        ),
    ],
)
def test_draft_is_detected_from_schema(schema: dict[str, Any], valid: Any, invalid: Any) -> None:
    tool = ToolSpec(name="t", input_schema=schema)
    assert validate_arguments(tool, {"p": valid}) == ({"p": valid}, [])
    with pytest.raises(ToolArgumentsError):
        validate_arguments(tool, {"p": invalid})


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"p": {"type": "no-such-type"}}},  # invalid schema
        {"type": "object", "properties": {"p": {"$ref": "#/$defs/Missing"}}},  # unresolvable reference
    ],
)
def test_a_broken_schema_is_not_enforced(schema: dict[str, Any]) -> None:
    tool = ToolSpec(name="t", input_schema=schema)
    assert validate_arguments(tool, {"p": 1}) == ({"p": 1}, [])


def test_validators_are_compiled_once_per_schema(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[object] = []
    real = validation.validator_for

    def counting(schema: Any, default: Any) -> Any:
        compiled.append(schema)
        return real(schema, default=default)

    monkeypatch.setattr(validation, "validator_for", counting)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    tool = ToolSpec(name="t", input_schema=schema)
    renamed = tool.model_copy(update={"name": "server__t"})  # the registry's renaming shares the schema
    for _ in range(50):
        validate_arguments(tool, {"n": 1})
        validate_arguments(renamed, {"n": "2"})
    assert len(compiled) == 1


# -- patterns: no backtracking, whoever writes the schema and the string ------------------------------

BACKTRACKS = "^(a+)+$"  # Python's re takes for ever on "aaa…!"; RE2 takes time linear in the text
NO_MATCH = "a" * 40 + "!"


def _tool(schema: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name="t", input_schema={"type": "object", **schema})


@pytest.mark.timeout(10)  # before the fix: Python's re, for ever
def test_a_pattern_that_would_backtrack_is_checked_at_once_and_right() -> None:
    tool = _tool({"properties": {"s": {"type": "string", "pattern": BACKTRACKS}}})
    with pytest.raises(ToolArgumentsError, match=r"does not match '\^\(a\+\)\+\$'"):
        validate_arguments(tool, {"s": NO_MATCH})
    assert validate_arguments(tool, {"s": "a" * 40}) == ({"s": "a" * 40}, [])


@pytest.mark.timeout(10)
def test_property_names_are_matched_without_backtracking_too() -> None:
    tool = _tool({"patternProperties": {BACKTRACKS: {"type": "integer"}}, "additionalProperties": False})
    with pytest.raises(ToolArgumentsError, match="does not match any of the regexes"):
        validate_arguments(tool, {NO_MATCH: 1})
    with pytest.raises(ToolArgumentsError, match="is not of type 'integer'"):
        validate_arguments(tool, {"aaaa": "x"})
    assert validate_arguments(tool, {"aaaa": 1}) == ({"aaaa": 1}, [])
    names = _tool({"propertyNames": {"pattern": BACKTRACKS}})
    with pytest.raises(ToolArgumentsError):
        validate_arguments(names, {NO_MATCH: 1})


@pytest.mark.timeout(10)
@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        # jsonschema's own unevaluatedProperties searches patternProperties with re: not checked.
        ({"patternProperties": {BACKTRACKS: True}, "unevaluatedProperties": False}, {NO_MATCH: 1}),
        # A subschema naming its dialect would be checked by jsonschema's stock class, with re.
        (
            {
                "properties": {
                    "s": {"$schema": "http://json-schema.org/draft-07/schema#", "pattern": BACKTRACKS}
                }
            },
            {"s": NO_MATCH},
        ),
    ],
)
def test_what_only_a_backtracking_engine_could_check_is_not_enforced(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    assert validate_arguments(_tool(schema), arguments) == (arguments, [])


def test_a_pattern_re2_cannot_run_rejects_nothing() -> None:
    lookahead = "^(?!admin).*$"
    tool = _tool({"properties": {"s": {"type": "string", "pattern": lookahead}}})
    assert validate_arguments(tool, {"s": "admin"}) == ({"s": "admin"}, [])
    with pytest.raises(ToolArgumentsError, match="is not of type 'string'"):
        validate_arguments(tool, {"s": ["admin"]})  # the rest of the schema still holds
    names = _tool({"patternProperties": {lookahead: {"type": "integer"}}, "additionalProperties": False})
    assert validate_arguments(names, {"user": "x"}) == ({"user": "x"}, [])


@pytest.mark.parametrize(
    ("pattern", "matching", "other"),
    [
        ("^[a-z]+-\\d{2}$", "ab-12", "ab-123"),
        ("^\\u0041+$", "AA", "B"),  # ECMA-262's \u escape
        ("^[\\u00e0-\\u00ff]$", "é", "e"),
        ("ab\\Z", "xab", "abx"),  # Python's \Z, which schemas checked with re may use
        ("^[\\\\u]+$", "\\u", "x"),  # an escaped backslash, then a plain u
        ("^(?P<word>\\w+)$", "word_1", "two words"),
    ],
)
def test_patterns_keep_their_meaning(pattern: str, matching: str, other: str) -> None:
    tool = _tool({"properties": {"s": {"type": "string", "pattern": pattern}}})
    assert validate_arguments(tool, {"s": matching}) == ({"s": matching}, [])
    with pytest.raises(ToolArgumentsError, match="does not match"):
        validate_arguments(tool, {"s": other})
