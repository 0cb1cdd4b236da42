"""Each message's wire form, computed once: what keeps a step's cost flat as the transcript grows.

Every request sends the whole conversation again. Converting (and validating, as the SDKs do) every
earlier message on every step makes a run of n steps cost n² conversions; messages are immutable
values, so an adapter converts each one once, keeps the encoded JSON, and joins the pieces per request.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["WireCache", "encode", "join_body"]

KeyT = TypeVar("KeyT")
WireT = TypeVar("WireT")


def encode(value: Any) -> bytes:
    """Compact JSON, UTF-8 as is (the APIs take it; escaping would only grow the body)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (in a history passed in): JSON can escape it; the provider judges it.
        return json.dumps(value, separators=(",", ":")).encode()


def join_body(messages: list[bytes], tools: list[bytes], fields: dict[str, Any]) -> bytes:
    """A request body from encoded messages and tools (joined, not re-encoded) and its other fields."""
    parts = [b'{"messages":[', b",".join(messages), b"]"]
    if tools:
        parts += [b',"tools":[', b",".join(tools), b"]"]
    if fields:
        parts += [b",", encode(fields)[1:]]
    else:
        parts.append(b"}")
    return b"".join(parts)


class WireCache(Generic[KeyT, WireT]):
    """`convert(item)`, remembered for as long as `item` lives.

    Keyed by identity with a weak reference: our messages and tool specs are frozen pydantic values,
    which hash by walking their fields (the very cost this avoids) or not at all (list fields).
    """

    def __init__(self, convert: Callable[[KeyT], WireT]) -> None:
        self._convert = convert
        self._entries: dict[int, tuple[weakref.ref[Any], WireT]] = {}

    def __call__(self, item: KeyT) -> WireT:
        key = id(item)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is item:
            return entry[1]
        wire = self._convert(item)
        self._entries[key] = (weakref.ref(item, self._forgetter(key)), wire)
        return wire

    def __len__(self) -> int:
        return len(self._entries)

    def _forgetter(self, key: int) -> Callable[[weakref.ref[Any]], None]:
        cache = weakref.ref(self)  # the cache may go before the items it holds

        def forget(dead: weakref.ref[Any]) -> None:
            live = cache()
            entry = live._entries.get(key) if live is not None else None
            if live is not None and entry is not None and entry[0] is dead:
                del live._entries[key]

        return forget
