"""An elicitation's requested schema as a form: its fields, each reading and checking what a person
typed, and the defaults applied to what they left alone.

MCP restricts the schema to one flat object of strings (with `format` email, uri, date, date-time),
numbers, integers, booleans and enums (single: `enum` with optional `enumNames`, or `oneOf` of
`const`/`title`; multiple: an array whose `items` are such an enum). Anything else is refused, so the
caller can decline with a reason instead of sending the server a value it did not ask for.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["ElicitationForm", "FormError", "FormField", "FormValue"]

FormValue = str | int | float | bool | list[str]
FieldKind = Literal["string", "number", "integer", "boolean", "choice", "choices"]

_YES = ("y", "yes", "true", "1")
_NO = ("n", "no", "false", "0")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class FormError(ValueError):
    """What a person typed (or a schema) does not fit; the message says what to type instead."""


@dataclass(frozen=True)
class FormField:
    name: str
    kind: FieldKind
    title: str
    description: str = ""
    required: bool = False
    default: FormValue | None = None
    choices: tuple[tuple[str, str], ...] = ()
    """(value, label) of an enum, in the schema's order."""
    constraints: Mapping[str, Any] = field(default_factory=dict)
    """minLength, maxLength, minimum, maximum, format, minItems, maxItems: as the schema says."""

    def hint(self) -> str:
        """What may be typed, in a few words (shown next to the question)."""
        if self.kind == "boolean":
            return "y/n"
        if self.kind in ("choice", "choices"):
            labels = ", ".join(f"{i}) {label}" for i, (_, label) in enumerate(self.choices, 1))
            return labels + (" (several: comma-separated)" if self.kind == "choices" else "")
        if self.kind in ("number", "integer"):
            low, high = self.constraints.get("minimum"), self.constraints.get("maximum")
            span = f" {_plain(low)}..{_plain(high)}" if low is not None and high is not None else ""
            return f"{'a whole number' if self.kind == 'integer' else 'a number'}{span}"
        fmt = self.constraints.get("format")
        return {"email": "an email address", "uri": "a URL", "date": "YYYY-MM-DD"}.get(fmt or "", "text")

    def shown_default(self) -> str:
        """The default as the person would type it ('' when there is none)."""
        value = self.default
        if value is None:
            return ""
        if isinstance(value, bool):
            return "y" if value else "n"
        if isinstance(value, list):
            return ", ".join(self._label(item) for item in value)
        return self._label(str(value)) if self.kind == "choice" else _plain(value)

    def read(self, typed: str) -> FormValue | None:
        """The value for what was typed; empty means the default (None if there is none and it is
        optional). Raises `FormError` saying what is wrong."""
        text = typed.strip()
        if not text:
            if self.default is not None:
                return self.default
            if self.required:
                raise FormError(f"{self.title} is required")
            return None
        return self.check(self._parse(text))

    def check(self, value: Any) -> FormValue:
        """`value` (as typed or as sent by a web form), checked against the schema."""
        c = self.constraints
        if self.kind == "boolean":
            if not isinstance(value, bool):
                raise FormError(f"{self.title}: answer y or n")
            return value
        if self.kind in ("number", "integer"):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise FormError(f"{self.title}: expected {self.hint()}")
            if self.kind == "integer" and value != int(value):
                raise FormError(f"{self.title}: expected a whole number, got {value}")
            if c.get("minimum") is not None and value < c["minimum"]:
                raise FormError(f"{self.title}: at least {_plain(c['minimum'])}")
            if c.get("maximum") is not None and value > c["maximum"]:
                raise FormError(f"{self.title}: at most {_plain(c['maximum'])}")
            return int(value) if self.kind == "integer" else value
        values = [choice for choice, _ in self.choices]
        if self.kind == "choice":
            if value not in values:
                raise FormError(f"{self.title}: choose one of {', '.join(values)}")
            return str(value)
        if self.kind == "choices":
            if not isinstance(value, list) or any(item not in values for item in value):
                raise FormError(f"{self.title}: choose from {', '.join(values)}")
            if c.get("minItems") is not None and len(value) < c["minItems"]:
                raise FormError(f"{self.title}: choose at least {c['minItems']}")
            if c.get("maxItems") is not None and len(value) > c["maxItems"]:
                raise FormError(f"{self.title}: choose at most {c['maxItems']}")
            return [str(item) for item in value]
        if not isinstance(value, str):
            raise FormError(f"{self.title}: expected text")
        if c.get("minLength") is not None and len(value) < c["minLength"]:
            raise FormError(f"{self.title}: at least {c['minLength']} characters")
        if c.get("maxLength") is not None and len(value) > c["maxLength"]:
            raise FormError(f"{self.title}: at most {c['maxLength']} characters")
        _check_format(self.title, c.get("format"), value)
        return value

    def _parse(self, text: str) -> Any:
        if self.kind == "boolean":
            if text.lower() in _YES:
                return True
            if text.lower() in _NO:
                return False
            raise FormError(f"{self.title}: answer y or n")
        if self.kind in ("number", "integer"):
            try:
                return int(text) if re.fullmatch(r"[+-]?\d+", text) else float(text)
            except ValueError:
                raise FormError(f"{self.title}: expected {self.hint()}, got {text!r}") from None
        if self.kind == "choice":
            return self._choice(text)
        if self.kind == "choices":
            return [self._choice(part.strip()) for part in text.split(",") if part.strip()]
        return text

    def _choice(self, text: str) -> str:
        if text.isdigit() and 1 <= int(text) <= len(self.choices):
            return self.choices[int(text) - 1][0]
        for value, label in self.choices:
            if text in (value, label) or text.lower() == label.lower():
                return value
        raise FormError(f"{self.title}: {text!r} is not one of the choices ({self.hint()})")

    def _label(self, value: str) -> str:
        return next((label for choice, label in self.choices if choice == value), value)


@dataclass(frozen=True)
class ElicitationForm:
    fields: tuple[FormField, ...]

    @classmethod
    def from_schema(cls, schema: Mapping[str, Any]) -> ElicitationForm:
        """The form for an elicitation's `requestedSchema`; raises `FormError` for what MCP does not allow."""
        properties = schema.get("properties") or {}
        if schema.get("type", "object") != "object" or not isinstance(properties, Mapping):
            raise FormError("the requested schema is not a flat object of fields")
        required = set(schema.get("required") or ())
        return cls(tuple(_field(name, spec, name in required) for name, spec in properties.items()))

    def complete(self, answers: Mapping[str, Any]) -> dict[str, FormValue]:
        """What to send for `answers` (a field's name to its value, as a web form or `read` gives it):
        each given value checked, a missing one replaced by its default, a missing required one refused."""
        unknown = set(answers) - {f.name for f in self.fields}
        if unknown:
            raise FormError(f"no such field: {', '.join(sorted(unknown))}")
        content: dict[str, FormValue] = {}
        for form_field in self.fields:
            value = answers.get(form_field.name)
            if value is None or value == "":
                value = form_field.default
                if value is None:
                    if form_field.required:
                        raise FormError(f"{form_field.title} is required")
                    continue
            content[form_field.name] = form_field.check(value)
        return content


def _field(name: str, spec: Any, required: bool) -> FormField:
    if not isinstance(spec, Mapping):
        raise FormError(f"field {name!r} has no schema")
    title = str(spec.get("title") or name)
    common: dict[str, Any] = {
        "name": name,
        "title": title,
        "description": str(spec.get("description") or ""),
        "required": required,
        "default": spec.get("default"),
        "constraints": {
            key: spec[key]
            for key in ("minLength", "maxLength", "minimum", "maximum", "format", "minItems", "maxItems")
            if key in spec
        },
    }
    kind = spec.get("type")
    choices = _choices(spec)
    if kind == "array":
        items = _choices(spec.get("items") or {})
        if not items:
            raise FormError(f"field {name!r}: only lists of choices can be asked for")
        return FormField(kind="choices", choices=items, **common)
    if choices:
        return FormField(kind="choice", choices=choices, **common)
    if kind in ("string", "number", "integer", "boolean"):
        return FormField(kind=kind, **common)
    raise FormError(f"field {name!r}: type {kind!r} cannot be asked for (strings, numbers, booleans, enums)")


def _choices(spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    if "enum" in spec:
        values = [str(v) for v in spec["enum"]]
        names = spec.get("enumNames") or values
        return tuple(zip(values, [str(n) for n in names], strict=False))
    options = spec.get("oneOf") or spec.get("anyOf") or []
    return tuple(
        (str(o["const"]), str(o.get("title", o["const"])))
        for o in options
        if isinstance(o, Mapping) and "const" in o
    )


def _check_format(title: str, fmt: str | None, value: str) -> None:
    if fmt == "email" and not _EMAIL.match(value):
        raise FormError(f"{title}: expected an email address like name@example.com")
    if fmt == "uri" and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://\S+$", value):
        raise FormError(f"{title}: expected a URL like https://example.com")
    try:
        if fmt == "date":
            datetime.date.fromisoformat(value)
        elif fmt == "date-time":
            datetime.datetime.fromisoformat(value)
    except ValueError:
        raise FormError(
            f"{title}: expected a {'date (YYYY-MM-DD)' if fmt == 'date' else 'date and time'}"
        ) from None


def _plain(value: Any) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
