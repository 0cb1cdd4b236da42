"""Checking a call's arguments against the tool's input schema before anything is sent.

Models often get a type slightly wrong in a way that has one obvious fix: `"3"` for an integer, `"true"`
for a boolean, `5` for a string, `null` for an optional property (left out: MCP reads a null argument as
not given, e.g. for `x-mcp-header` parameters). Those are coerced (only when the schema then accepts the arguments) and
each fix is reported as a note. Anything else raises `ToolArgumentsError` with a message a model can act
on: the schema errors with their paths, and the arguments the tool expects.

The schema and the arguments may both come from outside, and this runs on the event loop: patterns are
matched by RE2, which never backtracks (`_patterns`), never by Python's `re`.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError, relevance
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing.exceptions import Unresolvable

from toolbridge._values import value_problem
from toolbridge.errors import ToolArgumentsError
from toolbridge.tools._fast_check import Check, compile_check
from toolbridge.tools._patterns import bounded_validator
from toolbridge.types import ToolSpec

__all__ = ["schema_problem", "validate_arguments"]

logger = logging.getLogger("toolbridge.tools")

_CACHE_SIZE = 1024
_MAX_REPORTED_ERRORS = 5
_MAX_COERCION_ROUNDS = 3
_MAX_LISTED_PARAMETERS = 25
_INTEGER = re.compile(r"[+-]?\d+(\.0*)?")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class _Compiled:
    """One input schema, compiled once: the full validator (None: not enforced) and its quick check."""

    schema: dict[str, Any]
    validator: Validator | None
    surely_valid: Check | None


# Keyed by id(schema); the entry holds the schema itself, so the id cannot be reused while cached.
_compiled: OrderedDict[int, _Compiled] = OrderedDict()


def validate_arguments(tool: ToolSpec, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Check `arguments` against `tool.input_schema`; return them (coerced where obvious) and notes.

    Raises `ToolArgumentsError` when they do not match and no obvious coercion makes them match.
    A schema that is itself invalid or unresolvable is not enforced: the server will judge the call.
    """
    if problem := value_problem(arguments):
        # Before anything walks or encodes them (the validator, the cache key, the server's transport).
        raise ToolArgumentsError(
            f"The arguments of {tool.name!r} {problem}, so it did not run. "
            "Call it again with plain JSON arguments.",
            tool=tool.name,
        )
    compiled = _compile(tool.input_schema, tool.name)
    validator = compiled.validator
    if validator is None:
        return arguments, []
    if compiled.surely_valid is not None and compiled.surely_valid(arguments):
        return arguments, []  # the common case, without the full validator's error machinery
    try:
        errors = list(validator.iter_errors(arguments))
        if not errors:
            return arguments, []
        coerced, notes = _coerce_until_valid(validator, arguments, errors)
    except Unresolvable as exc:
        logger.warning(
            "input schema of tool %r has an unresolvable $ref (%s); not validating", tool.name, exc
        )
        return arguments, []
    if coerced is not None:
        return coerced, notes
    raise ToolArgumentsError(_message(tool, errors), tool=tool.name)


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is not a valid JSON Schema (of the draft its `$schema` names, else 2020-12); None
    when it is. For schemas from outside (a client's tools), before anything renders or compiles them."""
    try:
        validator_for(schema, default=Draft202012Validator).check_schema(schema)
    except SchemaError as error:
        where = "/".join(str(part) for part in error.absolute_path)
        return f"{error.message}{f' (at {where})' if where else ''}"
    return None


def _compile(schema: dict[str, Any], tool_name: str) -> _Compiled:
    key = id(schema)
    cached = _compiled.get(key)
    if cached is not None and cached.schema is schema:
        _compiled.move_to_end(key)
        return cached
    cls = validator_for(schema, default=Draft202012Validator)
    validator: Validator | None = None
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        logger.warning(
            "input schema of tool %r is invalid (%s); not validating its arguments", tool_name, exc
        )
    else:
        bounded = bounded_validator(cls, schema)
        if isinstance(bounded, str):
            logger.warning("input schema of tool %r: %s; not validating its arguments", tool_name, bounded)
        else:
            validator = bounded
    compiled = _Compiled(schema, validator, compile_check(schema) if validator is not None else None)
    _compiled[key] = compiled
    if len(_compiled) > _CACHE_SIZE:
        _compiled.popitem(last=False)
    return compiled


# -- coercion -----------------------------------------------------------------------------------------


def _coerce_until_valid(
    validator: Validator, arguments: dict[str, Any], errors: list[ValidationError]
) -> tuple[dict[str, Any] | None, list[str]]:
    """Apply obvious fixes round by round; the coerced arguments if they end up valid, else None."""
    current = arguments
    notes: list[str] = []
    for _ in range(_MAX_COERCION_ROUNDS):
        changed = False
        for error in errors:
            fix = _fix_for(error, validator.schema)
            if fix is None:
                return None, []
            if not changed:
                current = copy.deepcopy(current)
                changed = True
            value, note = fix
            _set_at(current, error.absolute_path, value)
            notes.append(note)
        errors = list(validator.iter_errors(current))
        if not errors:
            return current, notes
    return None, []


def _fix_for(error: ValidationError, root: Any) -> tuple[Any, str] | None:
    """The coerced value (or `_LEAVE_OUT`) and a note for a type mismatch with one obvious fix, else None."""
    if not error.absolute_path:  # the arguments object itself is wrong: nothing obvious to fix
        return None
    if error.instance is None and _optional(root, list(error.absolute_path)):
        return (
            _LEAVE_OUT,
            f"Argument '{_path(error.absolute_path)}' was given as null; left it out (it is optional).",
        )
    if error.validator == "type":
        wanted = _as_list(error.validator_value)
    elif error.validator in ("anyOf", "oneOf") and error.context:
        # Optional[int] and friends: a list of alternatives that each failed only on their type.
        wanted = [
            t
            for sub in error.context
            if sub.validator == "type" and not sub.relative_path
            for t in _as_list(sub.validator_value)
        ]
    else:
        return None
    value = error.instance
    for kind in wanted:
        coerced = _coerce(value, kind)
        if coerced is not _NO_FIX:
            return coerced, (
                f"Argument '{_path(error.absolute_path)}' was given as {_kind(value)} {json.dumps(value)}; "
                f"used the {kind} {json.dumps(coerced)} instead."
            )
    return None


_NO_FIX = object()
_LEAVE_OUT = object()
"""A fix that removes the argument rather than replacing its value."""


def _optional(root: Any, path: list[str | int]) -> bool:
    """Whether the property at `path` is one its object's schema declares and does not require (only along
    plain `properties`: where composition or `$ref` decides, nothing is assumed)."""
    schema = root
    for key in path[:-1]:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(key, str) or not isinstance(properties, dict):
            return False
        schema = properties.get(key)
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return False
    name = path[-1]
    required = schema.get("required")
    return name in schema["properties"] and not (isinstance(required, list) and name in required)


def _coerce(value: Any, kind: str) -> Any:
    try:
        return _coerce_value(value, kind)
    except (ValueError, OverflowError, RecursionError):
        # Digits past Python's conversion limit, a float beyond range, JSON nested past the stack.
        return _NO_FIX


def _coerce_value(value: Any, kind: str) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if kind == "integer" and _INTEGER.fullmatch(text):
            return int(float(text)) if "." in text else int(text)
        if kind == "number" and _NUMBER.fullmatch(text):
            number = float(text)
            if math.isfinite(number):
                return int(text) if _INTEGER.fullmatch(text) and "." not in text else number
        if kind == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if kind in ("array", "object") and text[:1] in "[{":
            # A model that JSON-encoded a list or object twice; the re-validation checks the result.
            decoded = json.loads(text)
            if value_problem(decoded) is None and isinstance(decoded, list if kind == "array" else dict):
                return decoded
    elif kind == "string" and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return _NO_FIX


def _set_at(document: Any, path: Iterable[str | int], value: Any) -> None:
    keys = list(path)
    if not keys:
        raise ValueError("cannot replace the whole arguments object")
    for key in keys[:-1]:
        document = document[key]
    if value is _LEAVE_OUT:
        del document[keys[-1]]
    else:
        document[keys[-1]] = value


# -- messages -----------------------------------------------------------------------------------------


def _message(tool: ToolSpec, errors: list[ValidationError]) -> str:
    ranked = sorted(errors, key=relevance, reverse=True)[:_MAX_REPORTED_ERRORS]
    problems = []
    for error in ranked:
        where = _path(error.absolute_path)
        text = _shorten(_describe_error(error))
        problems.append(f"at '{where}': {text}" if where else text)
    more = len(errors) - len(ranked)
    if more > 0:
        problems.append(f"and {more} more")
    message = f"Invalid arguments for tool {tool.name!r}: {'; '.join(problems)}."
    expected = _expected_arguments(tool.input_schema)
    if expected:
        message += f" Expected arguments: {expected}."
    return message + " Call the tool again with corrected arguments."


def _describe_error(error: ValidationError) -> str:
    if error.validator in ("anyOf", "oneOf") and error.context:
        same_place = [sub for sub in error.context if not sub.relative_path]
        if same_place and all(sub.validator == "type" for sub in same_place):
            kinds = [t for sub in same_place for t in _as_list(sub.validator_value)]
            return f"{error.instance!r} is not of type {' or '.join(repr(k) for k in kinds)}"
    return error.message


def _expected_arguments(schema: dict[str, Any]) -> str:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ""
    required = set(schema.get("required", []))
    # Required parameters first: they are what a model most often leaves out.
    names = sorted(properties, key=lambda name: name not in required)
    parts = []
    for name in names[:_MAX_LISTED_PARAMETERS]:
        kind = _type_name(properties[name], schema)
        parts.append(f"{name} ({kind}, {'required' if name in required else 'optional'})")
    if len(names) > _MAX_LISTED_PARAMETERS:
        parts.append(f"and {len(names) - _MAX_LISTED_PARAMETERS} more")
    return ", ".join(parts) if parts else "none (call it with an empty object {})"


def _type_name(schema: Any, root: dict[str, Any], depth: int = 0) -> str:
    if not isinstance(schema, dict) or depth > 3:
        return "any"
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        return _type_name(target, root, depth + 1)
    if "enum" in schema and isinstance(schema["enum"], list):
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"][:10])
    if "const" in schema:
        return f"exactly {json.dumps(schema['const'])}"
    for combinator in ("anyOf", "oneOf"):
        if isinstance(schema.get(combinator), list):
            return " or ".join(dict.fromkeys(_type_name(s, root, depth + 1) for s in schema[combinator]))
    kinds = _as_list(schema.get("type", []))
    if kinds == ["array"] and isinstance(schema.get("items"), dict):
        return f"array of {_type_name(schema['items'], root, depth + 1)}"
    return " or ".join(kinds) if kinds else "any"


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _path(path: Sequence[str | int] | Iterable[str | int]) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _kind(value: Any) -> str:
    return {str: "the string", int: "the number", float: "the number"}.get(type(value), "the value")


def _shorten(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
