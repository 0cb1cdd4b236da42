"""The one place where `ToolCallDelta`s become `ToolCall`s: native argument deltas and calls parsed out of
text alike, with one JSON-repair rule (`toolbridge.parsing.decode_arguments`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from toolbridge._values import readable_text
from toolbridge.models.base import ToolCallDelta
from toolbridge.parsing import CallProblem, decode_arguments
from toolbridge.types import ToolCall

__all__ = ["CollectedCall", "ToolCallCollector"]

_RAW_PREVIEW = 500
UNNAMED_TOOL = "unnamed_tool"


@dataclass(frozen=True)
class CollectedCall:
    call: ToolCall
    problem: str | None = None
    """Why the call cannot run, in words for the model; None when it can."""
    cut_off: bool = False
    """The reply ended at the token limit before the call was complete."""


@dataclass
class _Parts:
    id: str | None = None
    name: str | None = None
    source: str | None = None
    arguments: list[str] = field(default_factory=list)


class ToolCallCollector:
    """Collects the deltas of one reply; `calls()` gives its calls in the order they began."""

    def __init__(self) -> None:
        self._parts: dict[int, _Parts] = {}

    def add(self, delta: ToolCallDelta) -> None:
        parts = self._parts.setdefault(delta.index, _Parts())
        parts.id = parts.id or delta.id
        parts.name = parts.name or delta.name
        parts.source = parts.source or delta.source
        parts.arguments.append(delta.arguments)

    def calls(self, *, truncated: bool = False) -> list[CollectedCall]:
        """`truncated`: the reply stopped at the token limit (finish reason `length`). A call whose
        arguments are not yet a whole JSON object was cut off then, and is not repaired into one."""
        return [_collect(parts, truncated=truncated) for parts in self._parts.values()]


def _is_whole_object(raw: str) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except (ValueError, RecursionError):
        return False


def _collect(parts: _Parts, *, truncated: bool) -> CollectedCall:
    # Names and ids go back to the provider in the next request: they must be text it can encode.
    name = readable_text((parts.name or "").strip()) or UNNAMED_TOOL
    raw = "".join(parts.arguments)
    try:
        arguments = decode_arguments(raw)
        problem = None
    except CallProblem as error:
        arguments, problem = {}, str(error)
    source = readable_text(parts.source) if parts.source is not None else None
    fields = {"name": name, "arguments": arguments, "source": source}
    call = ToolCall.model_validate(fields if parts.id is None else {**fields, "id": readable_text(parts.id)})
    if not parts.name:
        return CollectedCall(
            call, "Your tool call had no tool name, so nothing ran. Call a tool by its exact name."
        )
    if truncated and not _is_whole_object(raw):
        return CollectedCall(
            call,
            f"Your reply reached its token limit in the middle of this call to {name!r}, so it did not "
            "run. Call it again; if its arguments are long, split the work into smaller calls.",
            cut_off=True,
        )
    if problem is None:
        return CollectedCall(call)
    shown = readable_text(raw if len(raw) <= _RAW_PREVIEW else raw[:_RAW_PREVIEW] + "…")
    return CollectedCall(
        call,
        f"The arguments of your call to {name!r} could not be read ({problem}), so it did not run. "
        f"You sent: {shown}\nCall it again with the arguments as one JSON object.",
    )
