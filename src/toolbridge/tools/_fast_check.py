"""A quick "surely valid" check of tool arguments, compiled once per input schema.

Most calls a model makes are valid, and `jsonschema`'s full validator costs tens of microseconds even
then. `compile_check(schema)` turns the keywords tool schemas use (types, properties, required,
enums, bounds, `anyOf`, local `$ref`s) into nested closures that answer True only when the value is
valid. False means "not sure": the caller then runs the full validator, which has the last word and
the detailed errors. A schema using any keyword not handled here compiles to None (no quick check).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["Check", "compile_check"]

Check = Callable[[Any], bool]

# Keywords that say nothing about validity (jsonschema does not assert `format` by default either).
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "format",
        "$schema",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentEncoding",
        "contentMediaType",
        "$defs",
        "definitions",
    }
)
_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    # Only exact ints: 1.0 is an integer to JSON Schema too, but "not sure" is a safe answer.
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}
_SCALARS = (str, int, float, bool, type(None))
_OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties"})


class _Unsupported(Exception):
    """The schema uses something the quick check does not handle."""


def compile_check(schema: Any) -> Check | None:
    """A check that is True only for values `schema` accepts; None when the schema is beyond it."""
    try:
        return _Compiler(schema).compile(schema)
    except (_Unsupported, RecursionError):
        return None


class _Compiler:
    def __init__(self, root: Any) -> None:
        self._root = root
        self._refs: dict[str, Check] = {}

    def compile(self, schema: Any) -> Check:
        if schema is True or schema == {}:
            return _always
        if schema is False or not isinstance(schema, Mapping):
            raise _Unsupported
        checks: list[Check] = []
        if any(keyword in schema for keyword in _OBJECT_KEYWORDS):
            checks.append(_object(self, schema))
        for keyword, value in schema.items():
            if keyword in _ANNOTATIONS or keyword in _OBJECT_KEYWORDS or keyword.startswith("x-"):
                continue
            build = _KEYWORDS.get(keyword)
            if build is None:
                raise _Unsupported(keyword)
            checks.append(build(self, value, schema))
        return _all_of(checks)

    def ref(self, target: Any) -> Check:
        if not isinstance(target, str) or not target.startswith("#/"):
            raise _Unsupported("$ref")
        if target not in self._refs:
            resolved: Any = self._root
            for part in target[2:].split("/"):
                if not isinstance(resolved, Mapping) or part not in resolved:
                    raise _Unsupported("$ref")
                resolved = resolved[part]
            compiled: list[Check] = []
            # Recursive schemas: the name is bound before its body compiles, and looked up when called.
            self._refs[target] = lambda v: compiled[0](v)
            compiled.append(self.compile(resolved))
        return self._refs[target]


def _always(_value: Any) -> bool:
    return True


def _all_of(checks: list[Check]) -> Check:
    # Two checks (`type` and an object's keywords, usually) without a generator: this runs on every call.
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)

    return lambda v: all(one(v) for one in checks)


def _type(_c: _Compiler, value: Any, _schema: Any) -> Check:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) and n in _TYPES for n in names):
        raise _Unsupported("type")
    tests = [_TYPES[n] for n in names]
    return tests[0] if len(tests) == 1 else lambda v: any(test(v) for test in tests)


def _object(c: _Compiler, schema: Mapping[str, Any]) -> Check:
    """`properties`, `required` and `additionalProperties` in one pass over the object."""
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    if not isinstance(properties, Mapping) or not isinstance(required, list) or "patternProperties" in schema:
        raise _Unsupported("properties")
    compiled = {name: c.compile(sub) for name, sub in properties.items()}
    names = tuple(required)
    extra_schema = schema.get("additionalProperties", True)
    extra = None if extra_schema is False else c.compile(extra_schema)

    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for name in names:
            if name not in v:
                return False
        for name, item in v.items():
            sub = compiled.get(name, extra)
            if sub is None or not sub(item):
                return False
        return True

    return check


def _items(c: _Compiler, value: Any, _schema: Any) -> Check:
    sub = c.compile(value)
    return lambda v: not isinstance(v, list) or all(sub(item) for item in v)


def _same(value: Any, option: Any) -> bool:
    # JSON Schema tells booleans from numbers (true is not 1) and compares containers deeply.
    if isinstance(value, bool) or isinstance(option, bool):
        return isinstance(value, bool) and isinstance(option, bool) and value is option
    return type(value) in _SCALARS and value == option


def _enum(_c: _Compiler, value: Any, _schema: Any) -> Check:
    if not isinstance(value, list) or not all(isinstance(o, _SCALARS) for o in value):
        raise _Unsupported("enum")
    options = tuple(value)
    return lambda v: any(_same(v, option) for option in options)


def _const(_c: _Compiler, value: Any, _schema: Any) -> Check:
    if not isinstance(value, _SCALARS):
        raise _Unsupported("const")
    return lambda v: _same(v, value)


def _any_of(c: _Compiler, value: Any, _schema: Any) -> Check:
    if not isinstance(value, list) or not value:
        raise _Unsupported("anyOf")
    alternatives = [c.compile(sub) for sub in value]
    return lambda v: any(alternative(v) for alternative in alternatives)


def _all_of_keyword(c: _Compiler, value: Any, _schema: Any) -> Check:
    if not isinstance(value, list):
        raise _Unsupported("allOf")
    return _all_of([c.compile(sub) for sub in value])


def _ref(c: _Compiler, value: Any, _schema: Any) -> Check:
    return c.ref(value)


def _bound(compare: Callable[[float, float], bool]) -> Callable[[_Compiler, Any, Any], Check]:
    def build(_c: _Compiler, limit: Any, _schema: Any) -> Check:
        if isinstance(limit, bool) or not isinstance(limit, int | float):
            raise _Unsupported("bound")
        return lambda v: isinstance(v, bool) or not isinstance(v, int | float) or compare(v, limit)

    return build


def _length(
    kind: type[str] | type[list[Any]], compare: Callable[[int, int], bool]
) -> Callable[[_Compiler, Any, Any], Check]:
    def build(_c: _Compiler, limit: Any, _schema: Any) -> Check:
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise _Unsupported("length")
        return lambda v: not isinstance(v, kind) or compare(len(v), limit)

    return build


_KEYWORDS: dict[str, Callable[[_Compiler, Any, Any], Check]] = {
    "type": _type,
    "items": _items,
    "enum": _enum,
    "const": _const,
    "anyOf": _any_of,
    "allOf": _all_of_keyword,
    "$ref": _ref,
    "minimum": _bound(lambda v, limit: v >= limit),
    "maximum": _bound(lambda v, limit: v <= limit),
    "exclusiveMinimum": _bound(lambda v, limit: v > limit),
    "exclusiveMaximum": _bound(lambda v, limit: v < limit),
    # Python's len counts code points, as JSON Schema does for strings.
    "minLength": _length(str, lambda n, limit: n >= limit),
    "maxLength": _length(str, lambda n, limit: n <= limit),
    "minItems": _length(list, lambda n, limit: n >= limit),
    "maxItems": _length(list, lambda n, limit: n <= limit),
}
