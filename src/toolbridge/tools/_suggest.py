"""Which existing tool names a mistyped or half-remembered one most likely meant.

difflib alone misses the common case: a model asks for `get_time` and the tool is `get_current_time`,
or for `time` and only `time__get_current_time` exists. Names are compared by their words (split at
`_`, `-`, `.` and camelCase) as well as by spelling, and a `source__` prefix is ignored.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from toolbridge.types import bare_name

__all__ = ["closest_names"]

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_THRESHOLD = 0.5


def _words(name: str) -> set[str]:
    return {word.lower() for word in _WORD.findall(name)}


def _score(wanted: str, candidate: str) -> float:
    bare = bare_name(candidate).lower()
    spelling = difflib.SequenceMatcher(None, wanted.lower(), bare).ratio()
    words = _words(wanted)
    covered = len(words & _words(bare_name(candidate))) / len(words) if words else 0.0
    contains = 1.0 if wanted.lower() in bare or bare in wanted.lower() else 0.0
    return max(spelling, 0.6 * covered + 0.4 * spelling, 0.8 * contains + 0.2 * spelling)


def closest_names(wanted: str, candidates: Iterable[str], *, limit: int = 5) -> list[str]:
    """Up to `limit` of `candidates` that `wanted` most likely meant, best first (none if nothing is close)."""
    wanted = bare_name(wanted)
    scored = [(_score(wanted, candidate), candidate) for candidate in candidates]
    ranked = sorted((item for item in scored if item[0] >= _THRESHOLD), key=lambda item: -item[0])
    return [candidate for _, candidate in ranked[:limit]]
