"""The quick "surely valid" check in front of the full validator: never True for invalid arguments,
True for the valid ones tool schemas usually see, and it spares them the full validator."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from toolbridge._values import MAX_NESTING, _described_problem, _plainly_fine
from toolbridge.tools import validation
from toolbridge.tools._fast_check import compile_check
from toolbridge.tools.validation import validate_arguments
from toolbridge.types import ToolSpec

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10},
            "ratio": {"type": "number", "maximum": 1.5},
            "flag": {"type": "boolean"},
            "name": {"type": "string", "minLength": 1, "maxLength": 3},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
            "mode": {"enum": ["fast", "slow", 1, True]},
            "exact": {"const": 0},
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 2},
            "point": {"$ref": "#/$defs/Point"},
            "either": {"type": ["integer", "string"]},
        },
        "required": ["count"],
        "additionalProperties": False,
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
    },
    {  # recursive, with schemas for extra properties
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "additionalProperties": {"type": "integer"},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"value": {"type": "integer"}, "children": {"items": {"$ref": "#/$defs/Node"}}},
                "allOf": [{"required": ["value"]}],
            }
        },
    },
]
KEYS = ["count", "ratio", "flag", "name", "limit", "mode", "exact", "tags", "point", "either", "tree", "x"]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 12)
    | st.floats(-2, 12)
    | st.sampled_from(["", "a", "slow", "abcd"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.parametrize("schema", SCHEMAS)
@settings(max_examples=400, deadline=None)
@given(arguments=st.dictionaries(st.sampled_from(KEYS), JSON, max_size=5))
def test_the_quick_check_never_passes_what_the_full_validator_refuses(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    check = compile_check(schema)
    assert check is not None
    if check(arguments):
        assert Draft202012Validator(schema).is_valid(arguments), arguments


@pytest.mark.parametrize(
    "arguments",
    [
        {"count": 0},
        {"count": 9, "ratio": 1, "flag": False, "name": "abc", "limit": None, "mode": True, "exact": 0},
        {"count": 1, "tags": ["a"], "point": {"x": 2.5}, "either": "s", "mode": "slow"},
    ],
)
def test_usual_valid_arguments_pass_the_quick_check(arguments: dict[str, Any]) -> None:
    check = compile_check(SCHEMAS[0])
    assert check is not None
    assert check(arguments)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "object", "properties": {"p": {"$ref": "https://example.com/schema"}}},
        {"type": "object", "properties": {"p": {"oneOf": [{"type": "string"}]}}},
    ],
)
def test_a_schema_beyond_the_quick_check_gets_none(schema: dict[str, Any]) -> None:
    assert compile_check(schema) is None


def test_valid_arguments_skip_the_full_validator_and_invalid_ones_still_get_its_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    full_runs: list[object] = []
    validation._compiled.clear()
    tool = ToolSpec(name="t", input_schema=SCHEMAS[0])
    validate_arguments(tool, {"count": 0})  # compiles
    # The validator's class: the schema's draft, with patterns on RE2 (tools/_patterns.py).
    full = type(validation._compiled[id(tool.input_schema)].validator)
    real = full.iter_errors

    def counting(self: Any, instance: Any) -> Any:
        full_runs.append(instance)
        return real(self, instance)

    monkeypatch.setattr(full, "iter_errors", counting)
    for count in range(5):
        assert validate_arguments(tool, {"count": count}) == ({"count": count}, [])
    assert full_runs == []
    assert validate_arguments(tool, {"count": "3"}) == ({"count": 3}, [ANY_NOTE])
    assert full_runs


class _AnyNote(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and "count" in other


ANY_NOTE = _AnyNote()


class _Huge(int):
    """An integer past Python's conversion limit that hypothesis can still print."""

    def __repr__(self) -> str:
        return "<a 5000-digit integer>"


HUGE = _Huge(10**5000)
ODD_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.floats()
    | st.integers()
    | st.integers(min_value=4000, max_value=4600).map(lambda digits: HUGE)
    | st.text(max_size=4)
    | st.just("ok \ud800"),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=2) | st.just("\udfff"), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(value=ODD_VALUES, depth=st.sampled_from([0, MAX_NESTING - 2, MAX_NESTING + 2]))
def test_the_quick_walk_over_arguments_finds_every_problem_the_detailed_one_names(
    value: Any, depth: int
) -> None:
    for _ in range(depth):
        value = [value]
    assert _plainly_fine(value) == (_described_problem(value) is None)
