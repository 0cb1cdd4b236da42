"""External tools: offered to the model like the agent's own, but run by the caller, not by the agent.

A step whose reply calls one ends the run with those calls pending (`RunResult.pending_calls`); the
caller runs them and resumes the run with their results in the history. An external tool whose name an
own tool already has is shown to the model qualified by its source (`client__search`); the caller still
gets its calls under the name it gave.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolbridge.errors import UsageError
from toolbridge.types import NATIVE_SOURCE, ToolCall, ToolSpec, qualified_name

__all__ = ["DEFAULT_EXTERNAL_SOURCE", "ExternalTools"]

DEFAULT_EXTERNAL_SOURCE = "external"
"""The qualifier of a colliding external tool whose spec names no source of its own."""


class ExternalTools:
    """The external tools of one run, under the names the model sees them by."""

    def __init__(self, tools: Sequence[ToolSpec], own_names: set[str]) -> None:
        self._caller_names: dict[str, str] = {}  # the name the model sees -> the caller's name
        self.specs: list[ToolSpec] = []
        """As offered to the model."""
        for tool in tools:
            if tool.name in self._caller_names.values():
                raise UsageError(f"two external tools are named {tool.name!r}; give each its own name")
            shown = tool.name
            if shown in own_names:
                source = tool.source if tool.source != NATIVE_SOURCE else DEFAULT_EXTERNAL_SOURCE
                shown = qualified_name(source, tool.name)
                if shown in own_names or shown in self._caller_names:
                    raise UsageError(
                        f"the external tool {tool.name!r} collides with the agent's {tool.name!r} and "
                        f"{shown!r}; rename it"
                    )
            self._caller_names[shown] = tool.name
            renamed = {"name": shown, "original_name": tool.name} if shown != tool.name else {}
            self.specs.append(tool.model_copy(update=renamed))

    def split(self, calls: Sequence[ToolCall]) -> tuple[list[ToolCall], list[ToolCall]]:
        """`calls` as (the agent's own, the external ones), each in call order."""
        own = [call for call in calls if call.name not in self._caller_names]
        external = [call for call in calls if call.name in self._caller_names]
        return own, external

    def for_caller(self, call: ToolCall) -> ToolCall:
        """The call under the name the caller gave its tool."""
        return call.model_copy(update={"name": self._caller_names[call.name]})
