"""An elicitation's schema as a form: what each field accepts when typed, its defaults, its checks."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge.mcp.elicitation_form import ElicitationForm, FormError

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "minLength": 2},
        "email": {"type": "string", "format": "email"},
        "born": {"type": "string", "format": "date"},
        "age": {"type": "integer", "minimum": 1, "maximum": 120, "default": 30},
        "score": {"type": "number"},
        "agree": {"type": "boolean", "default": False},
        "pet": {"type": "string", "enum": ["cat", "dog"], "enumNames": ["Cats", "Dogs"], "default": "dog"},
        "hero": {
            "type": "string",
            "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}],
        },
        "tools": {"type": "array", "items": {"enum": ["saw", "drill"]}, "maxItems": 1},
    },
    "required": ["name"],
}
FORM = ElicitationForm.from_schema(SCHEMA)
FIELDS = {f.name: f for f in FORM.fields}


@pytest.mark.parametrize(
    ("field", "typed", "value"),
    [
        ("name", "Ada", "Ada"),
        ("age", "", 30),  # empty: the default
        ("age", "41", 41),
        ("score", "2.5", 2.5),
        ("agree", "y", True),
        ("agree", "no", False),
        ("pet", "1", "cat"),  # by number,
        ("pet", "dogs", "dog"),  # by label,
        ("pet", "cat", "cat"),  # by value
        ("hero", "Batman", "h2"),
        ("tools", "drill", ["drill"]),
        ("email", "", None),  # optional, no default
        ("born", "1815-12-10", "1815-12-10"),
    ],
)
def test_typed_answers_become_values(field: str, typed: str, value: Any) -> None:
    assert FIELDS[field].read(typed) == value


@pytest.mark.parametrize(
    ("field", "typed", "message"),
    [
        ("name", "", "Name is required"),
        ("name", "A", "at least 2 characters"),
        ("age", "0", "at least 1"),
        ("age", "4.5", "whole number"),
        ("age", "old", "expected a whole number 1..120"),
        ("agree", "maybe", "answer y or n"),
        ("pet", "cow", "not one of the choices"),
        ("tools", "saw, drill", "at most 1"),
        ("email", "ada", "email address"),
        ("born", "10/12/1815", "YYYY-MM-DD"),
    ],
)
def test_wrong_answers_say_what_to_type(field: str, typed: str, message: str) -> None:
    with pytest.raises(FormError, match=message):
        FIELDS[field].read(typed)


def test_complete_fills_in_defaults_and_refuses_what_is_missing_or_unknown() -> None:
    assert FORM.complete({"name": "Ada"}) == {"name": "Ada", "age": 30, "agree": False, "pet": "dog"}
    with pytest.raises(FormError, match="Name is required"):
        FORM.complete({})
    with pytest.raises(FormError, match="no such field: colour"):
        FORM.complete({"name": "Ada", "colour": "red"})


def test_hints_and_defaults_are_shown_as_typed() -> None:
    assert FIELDS["pet"].hint() == "1) Cats, 2) Dogs"
    assert FIELDS["pet"].shown_default() == "Dogs"
    assert FIELDS["agree"].shown_default() == "n"
    assert FIELDS["age"].hint() == "a whole number 1..120"


def test_a_nested_schema_is_refused() -> None:
    with pytest.raises(FormError, match="cannot be asked for"):
        ElicitationForm.from_schema({"type": "object", "properties": {"address": {"type": "object"}}})
