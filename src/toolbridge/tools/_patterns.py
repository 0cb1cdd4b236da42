"""Input schemas' regular expressions (`pattern`, `patternProperties`), run on RE2: no backtracking.

Python's `re` backtracks: `^(a+)+$` against forty `a`s and a `!` runs for longer than anyone waits,
holding the GIL, so a thread does not help and nothing can stop it. The schema and the string can both
come from outside (a pass-through client's tools and the model it steers; an MCP server's schema and a
gateway caller's arguments), and arguments are checked on the event loop. RE2 takes time linear in the
text for every pattern it accepts, so jsonschema's keywords that search with `re` are replaced here.

The dialect: JSON Schema patterns are ECMA-262's. `\\uXXXX` becomes RE2's `\\x{XXXX}`, and Python's `\\Z`, which a schema checked with Python before may use, RE2's `\\z`. Otherwise RE2 reads a
pattern as Python did, except where it is nearer ECMA-262: `\\d` and `\\w` are ASCII, `$` is the end of
the text only (Python's also matched before a final newline).

Patterns RE2 cannot run (lookaround, backreferences, atomic groups, counts over 1000) are never run on
Python's `re` instead: they are not checked, and such a pattern never rejects anything. `pattern`
passes; `patternProperties` applies its schema to no property, and a property it might match is not
"additional"; `unevaluatedProperties` is not checked at all in a schema with `patternProperties`
(jsonschema's own code for it searches with `re`). The server that runs the tool (or the pass-through
client) still judges the call; a warning names each such pattern once.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator
from typing import Any

import re2
from jsonschema.exceptions import ValidationError
from jsonschema.protocols import Validator
from jsonschema.validators import extend

__all__ = ["bounded_validator", "search"]

logger = logging.getLogger("toolbridge.tools")

_HEX = frozenset("0123456789abcdefABCDEF")
# The validator is Any: `descend`, which keywords use, is not on jsonschema's Validator protocol.
Keyword = Callable[[Any, Any, Any, dict[str, Any]], Iterator[ValidationError]]


def search(pattern: str, text: str) -> bool | None:
    """Whether `pattern` matches somewhere in `text` (as `re.search` does); None when RE2 cannot run it."""
    compiled = _compile(pattern)
    if compiled is None:
        return None
    # Bytes, so a lone surrogate (which no UTF-8 encoder accepts) cannot raise.
    return compiled.search(text.encode("utf-8", "surrogatepass")) is not None


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False  # the warning below says it once, in our log
    options.never_capture = True  # only whether it matches is asked: faster
    try:
        return re2.compile(_for_re2(pattern), options)
    except re2.error as error:
        logger.warning(
            "schema pattern %r is not checked: RE2, the regex engine used so that no pattern can run "
            "for ever, cannot run it (%s)",
            pattern,
            error,
        )
        return None


def _for_re2(pattern: str) -> str:
    """ECMA-262's `\\uXXXX` as RE2's `\\x{...}`; Python's `\\Z` as RE2's `\\z`."""
    if "\\" not in pattern:
        return pattern
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char != "\\" or i + 1 == len(pattern):
            out.append(char)
            i += 1
            continue
        escaped = pattern[i + 1]
        if escaped == "u" and len(digits := pattern[i + 2 : i + 6]) == 4 and set(digits) <= _HEX:
            out.append(f"\\x{{{digits}}}")
            i += 6
        else:
            out.append("\\z" if escaped == "Z" else pattern[i : i + 2])
            i += 2
    return "".join(out)


# -- jsonschema's keywords that search, on RE2 ------------------------------------------------------------


def _pattern(
    validator: Any, pattern: Any, instance: Any, _schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and search(pattern, instance) is False:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: Any, instance: Any, _schema: dict[str, Any]
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: dict[str, Any]
) -> Iterator[ValidationError]:
    """jsonschema's `additionalProperties`, with a property an unrunnable pattern may match not extra."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = sorted(
        (
            key
            for key in instance
            if key not in properties and all(search(pattern, key) is False for pattern in patterns)
        ),
        key=str,
    )
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        listed = ", ".join(repr(extra) for extra in extras)
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            regexes = ", ".join(repr(pattern) for pattern in sorted(patterns))
            yield ValidationError(f"{listed} {verb} not match any of the regexes: {regexes}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            yield ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


def _not_checked(
    _validator: Any, _value: Any, _instance: Any, _schema: dict[str, Any]
) -> Iterator[ValidationError]:
    yield from ()


def bounded_validator(cls: type[Validator], schema: dict[str, Any]) -> Validator | str:
    """A validator of `cls`'s draft for `schema` that uses no backtracking regex; or why there is none.

    A subschema with its own `$schema` would be checked by jsonschema's stock class of that dialect
    (its `evolve` looks the dialect up anew), with `re`: such a schema is not enforced.
    """
    pattern_properties = False
    pending: list[Any] = [schema]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, dict):
            if node is not schema and isinstance(node.get("$schema"), str):
                return "a subschema names its own dialect ($schema), which toolbridge does not check"
            pattern_properties = pattern_properties or "patternProperties" in node
            # All values, data (`const`, `enum`) too: a property may be named "const", and a false
            # alarm in data only leaves a keyword unchecked.
            pending.extend(node.values())
    return _bounded_class(cls, pattern_properties)(schema)


@functools.cache
def _bounded_class(cls: type[Validator], pattern_properties_anywhere: bool) -> type[Validator]:
    keywords: dict[str, Keyword] = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    if pattern_properties_anywhere:
        keywords["unevaluatedProperties"] = _not_checked
    extended: type[Validator] = extend(cls, keywords)  # type: ignore[no-untyped-call]
    return extended
