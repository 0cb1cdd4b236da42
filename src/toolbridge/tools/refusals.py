"""Why a call did not run: one message per cause, worded here once, the same on every surface.

Each builder returns the `ToolError` the call pipeline turns into the error result a model reads (an
agent's model, a gateway's client, an HTTP tool client, the terminal), with the `error_kind` of its cause.
Server failures and timeouts are results of the call itself (`toolbridge.mcp`), not refusals.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolbridge.errors import (
    ToolDeclinedError,
    ToolError,
    ToolNotAllowedError,
    ToolUnavailableError,
    UnknownToolError,
)
from toolbridge.tools._suggest import closest_names
from toolbridge.types import ToolSpec

__all__ = [
    "ambiguous_tool",
    "declined",
    "not_allowed",
    "unapproved",
    "unavailable_server",
    "unknown_source",
    "unknown_tool",
]

_LISTED = 30
"""Names listed when none is close to the one asked for."""


def unknown_tool(
    name: str, offered: Sequence[str], *, source: str | None = None, unavailable: Iterable[str] = ()
) -> UnknownToolError:
    """No offered tool is called `name` (on `source`); `offered` are the names the caller may call."""
    close = closest_names(name, offered)
    where = f" on {source!r}" if source else ""
    message = f"Unknown tool {name!r}{where}, so nothing ran."
    if close:
        message += f" Did you mean: {', '.join(close)}?"
    else:
        message += f" Available tools: {', '.join(sorted(offered)[:_LISTED]) or 'none'}."
    down = sorted(unavailable)
    if down:
        message += f" (Servers currently unavailable, whose tools are not listed: {', '.join(down)}.)"
    message += " Call one of the available tools with its exact name."
    return UnknownToolError(message, tool=name, suggestions=close)


def ambiguous_tool(name: str, candidates: Sequence[str]) -> UnknownToolError:
    message = (
        f"Tool name {name!r} is ambiguous: several servers have it, so nothing ran. "
        f"Call one of: {', '.join(candidates)}."
    )
    return UnknownToolError(message, tool=name, suggestions=candidates)


def unknown_source(name: str, source: str, known: Sequence[str]) -> UnknownToolError:
    message = (
        f"Unknown tool source {source!r}, so nothing ran. Known sources: {', '.join(known)}. "
        "Call the tool by its name alone and toolbridge will find it."
    )
    return UnknownToolError(message, tool=name)


def unavailable_server(name: str, server: str, why: str) -> ToolError:
    message = f"Server {server!r} is unavailable, so {name!r} did not run: {why}"
    return ToolUnavailableError(message, tool=name, server=server)


def not_allowed(tool: ToolSpec, why: str) -> ToolNotAllowedError:
    """`tool` exists but the caller may not use it; `why` names the rule ("the agent 'x' leaves it out")."""
    message = (
        f"Tool {tool.name!r} is not allowed here ({why}), so nothing ran. "
        "Call one of the tools you were offered."
    )
    return ToolNotAllowedError(message, tool=tool.name, server=tool.source)


def declined(tool: ToolSpec) -> ToolDeclinedError:
    """The user was asked and said no."""
    message = (
        f"The user declined this call to {tool.name!r}, so it did not run. Do not call it again; "
        "continue without it, or ask the user what they want instead."
    )
    return ToolDeclinedError(message, tool=tool.name, server=tool.source)


def unapproved(tool: ToolSpec, reason: str) -> ToolDeclinedError:
    """The call needs approval and nobody could be asked here."""
    message = (
        f"This call to {tool.name!r} needs the user's approval ({reason}), and no one could be asked "
        "here, so it did not run. Tell the user what you wanted to do: they can run it where they can "
        "approve it, or allow it in the config's approval rules."
    )
    return ToolDeclinedError(message, tool=tool.name, server=tool.source)
