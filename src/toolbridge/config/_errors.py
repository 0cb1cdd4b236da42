"""A pydantic `ValidationError` on the config as a `ConfigError` that names the key path and says what
to do: "agents.excel-helper.max_step: unknown key; did you mean 'max_steps'?"."""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Mapping
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from toolbridge.config._document import key_path

__all__ = ["describe", "explain"]

# Keys whose values are secrets: never echoed back in a message.
_SECRET_KEYS = ("api_key", "token", "headers", "apiKey")


def explain(error: ValidationError, root: type[BaseModel], unresolved: Mapping[str, str]) -> tuple[str, str]:
    """The first problem in `error` as (key path, message). `unresolved` maps key paths whose `${VAR}` is
    unset to the message saying so: that is the real problem when such a value has the wrong type."""
    problem = error.errors()[0]
    location = tuple(problem["loc"])
    key = key_path(location)
    if key in unresolved:
        return key, unresolved[key]
    return key, _message(problem, root, location)


def _message(problem: ErrorDetails, root: type[BaseModel], location: tuple[Any, ...]) -> str:
    kind = problem["type"]
    if kind == "extra_forbidden":
        known = _keys_of(root, location[:-1])
        close = difflib.get_close_matches(str(location[-1]), known, n=1)
        if close:
            return f"unknown key; did you mean {close[0]!r}?"
        return f"unknown key; valid keys: {', '.join(known)}" if known else "unknown key"
    if kind in ("model_type", "dict_type"):
        return f"expected an object, got {describe(problem['input'])}"
    message = problem["msg"].removeprefix("Value error, ")
    message = re.sub(r" or instance of \w+", "", message)  # our class names mean nothing to users
    if any(secret in location for secret in _SECRET_KEYS):
        return message
    return f"{message} (got {describe(problem['input'])})"


def _keys_of(root: type[BaseModel], location: tuple[Any, ...]) -> list[str]:
    """The keys the model found at `location` accepts (names and aliases), for "did you mean"."""
    annotation: Any = root
    for part in location:
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = next(
                (f for name, f in annotation.model_fields.items() if part in (name, f.alias)),
                None,
            )
            if field is None:
                return []
            annotation = field.annotation
        elif get_origin(annotation) in (dict, list, tuple):
            annotation = get_args(annotation)[-1 if get_origin(annotation) is dict else 0]
        else:
            return []
    annotation = _unwrap(annotation)
    if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return []
    aliases = {field.alias for field in annotation.model_fields.values() if field.alias}
    return sorted((set(annotation.model_fields) | aliases) - {"name"})  # an agent's name is its key


def _unwrap(annotation: Any) -> Any:
    """`X | None` -> `X`."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        return members[0] if len(members) == 1 else annotation
    return annotation


def describe(value: Any) -> str:
    """What a JSON value is, in words: "a string", "a number (8080)", "a list"."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})" if len(value) <= 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__
