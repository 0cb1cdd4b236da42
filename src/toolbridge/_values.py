"""Checks on values that come from outside (a model's output, a client's request) before they are ours.

A model can write anything: a lone UTF-16 surrogate (`"\\ud800"`) that no UTF-8 encoder accepts, an
integer of thousands of digits that Python refuses to print, nesting deep enough to exhaust the stack
of every recursive encoder (JSON, pydantic, the database driver). Each would crash far from where it came
in. Text is made readable (a lone surrogate becomes U+FFFD); structured values (tool arguments) are
refused with a reason the model can act on.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "MAX_INT_DIGITS",
    "MAX_NESTING",
    "has_lone_surrogate",
    "readable_text",
    "readable_value",
    "value_problem",
]

MAX_NESTING = 100
"""Levels of arrays and objects a value may have: far beyond any tool's schema, far below the stack."""

MAX_INT_DIGITS = 4300
"""Digits an integer may have: Python's own limit for converting integers to and from text."""

_LOG10_2 = math.log10(2)


def has_lone_surrogate(text: str) -> bool:
    if text.isascii():
        return False
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False


def readable_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (a surrogate pair becomes its character)."""
    if not has_lone_surrogate(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def readable_value(value: Any) -> Any:
    """`value` (JSON-like: dicts, lists, strings, numbers) with `readable_text` applied to every string and
    key; the same object when nothing needed replacing."""
    if isinstance(value, str):
        return readable_text(value)
    if isinstance(value, dict):
        items = [(readable_value(k), readable_value(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        values = [readable_value(v) for v in value]
        if all(v is v0 for v, v0 in zip(values, value, strict=True)):
            return value
        return values
    return value


def value_problem(value: Any) -> str | None:
    """What makes `value` unfit to use as data, in words for the model; None when it is fine.

    Walks the value without recursion, so a value nested past the stack is described, not crashed on."""
    if _plainly_fine(value):
        return None  # the usual case: no paths to build for the message
    return _described_problem(value)


def _plainly_fine(value: Any) -> bool:
    """The same walk as `_described_problem`, without keeping where it is."""
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_NESTING:
            return False
        if isinstance(item, str):
            if not item.isascii() and has_lone_surrogate(item):
                return False
        elif isinstance(item, bool) or item is None or isinstance(item, float):
            continue
        elif isinstance(item, int):
            if item.bit_length() * _LOG10_2 > MAX_INT_DIGITS:
                return False
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and has_lone_surrogate(key):
                    return False
                pending.append((child, depth + 1))
        elif isinstance(item, list | tuple):
            pending.extend((child, depth + 1) for child in item)
    return True


def _described_problem(value: Any) -> str | None:
    pending: list[tuple[Any, str, int]] = [(value, "", 0)]
    while pending:
        item, path, depth = pending.pop()
        if depth > MAX_NESTING:
            return f"are nested more than {MAX_NESTING} levels deep (at {path or 'the top'})"
        if isinstance(item, str):
            if has_lone_surrogate(item):
                return f"contain a lone UTF-16 surrogate, which is not text (in {path or 'the value'})"
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int):
            if abs(item).bit_length() * _LOG10_2 > MAX_INT_DIGITS:
                return f"contain an integer of more than {MAX_INT_DIGITS} digits (at {path or 'the top'})"
        elif isinstance(item, dict):
            for key, child in item.items():
                if isinstance(key, str) and has_lone_surrogate(key):
                    where = path or "the top"
                    return f"contain a lone UTF-16 surrogate, which is not text (in a key of {where})"
                name = str(key)[:40]  # paths stay short whatever the keys
                pending.append((child, f"{path}.{name}" if path else name, depth + 1))
        elif isinstance(item, list | tuple):
            pending.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))
    return None
