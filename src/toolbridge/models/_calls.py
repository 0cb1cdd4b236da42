"""The one place where `ToolCallDelta`s become `ToolCall`s: native argument deltas and calls parsed out of
text alike, with one JSON-repair rule (`toolbridge.parsing.decode_arguments`)."""

from __future__ import annotations

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

    def calls(self) -> list[CollectedCall]:
        return [_collect(parts) for parts in self._parts.values()]


def _collect(parts: _Parts) -> CollectedCall:
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
    if problem is None:
        return CollectedCall(call)
    shown = readable_text(raw if len(raw) <= _RAW_PREVIEW else raw[:_RAW_PREVIEW] + "…")
    return CollectedCall(
        call,
        f"The arguments of your call to {name!r} could not be read ({problem}), so it did not run. "
        f"You sent: {shown}\nCall it again with the arguments as one JSON object.",
    )
