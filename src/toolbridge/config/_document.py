"""From config file text to an expanded document: JSONC comments out, `${VAR}` references resolved."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_NESTING",
    "Trail",
    "Unresolved",
    "UnresolvedVariable",
    "expand",
    "key_path",
    "nested_too_deep",
    "nesting_error",
    "strip_jsonc",
]

Trail = tuple[str | int, ...]
"""Where a value sits in the document: ("mcpServers", "x", "args", 2)."""


def _closing_quote(text: str, opening: int) -> int:
    """Where the JSON string opened at `opening` closes (past the end of `text` if it never does)."""
    i, n = opening + 1, len(text)
    while i < n and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i


def strip_jsonc(text: str) -> str:
    """Blank out comments and trailing commas outside strings, keeping line and column numbers intact."""
    out = list(text)
    i, n = 0, len(text)
    last_comma: int | None = None
    while i < n:
        char = text[i]
        if char == '"':
            i = _closing_quote(text, i)
            last_comma = None
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end == -1 else end + 2
            for j in range(i, end):
                if text[j] != "\n":
                    out[j] = " "
            i = end
            continue
        elif char == ",":
            last_comma = i
        elif char in "]}" and last_comma is not None:
            out[last_comma] = " "
            last_comma = None
        elif not char.isspace():
            last_comma = None
        i += 1
    return "".join(out)


MAX_NESTING = 100
"""How deep objects and lists may nest in a config file. Real configs need under ten levels; a deeper
one is generated or corrupted, and reading it would exhaust Python's recursion limit."""

_TOO_DEEP_ADVICE = (
    f"a config file nests objects and lists at most {MAX_NESTING} levels deep; "
    "check that this is the config file you meant (a generated or damaged file?)"
)


def nesting_error(text: str) -> str | None:
    """Where JSON `text` nests deeper than `MAX_NESTING` ("nested too deep at line 3, column 9; ..."),
    or None. Read without recursion, before the text is decoded (which would recurse)."""
    depth = 0
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == '"':
            i = _closing_quote(text, i)
        elif char in "[{":
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, i) + 1
                column = i - text.rfind("\n", 0, i)
                return f"nested too deep at line {line}, column {column}; {_TOO_DEEP_ADVICE}"
        elif char in "]}":
            depth -= 1
        i += 1
    return None


def nested_too_deep(value: Any) -> str | None:
    """Like `nesting_error`, for a document already decoded (a caller of `parse_config` may build one)."""
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_NESTING:
                return f"nested too deep; {_TOO_DEEP_ADVICE}"
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return None


_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Unresolved:
    """A `${...}` reference that could not be expanded, at `key` (like `models.fast.api_key`)."""

    key: str
    problem: str
    """What is wrong: "environment variable 'X' is not set"."""
    advice: str
    """What to do about it."""


class UnresolvedVariable(Exception):
    def __init__(self, problem: str, advice: str, *, deferrable: bool = True) -> None:
        super().__init__(f"{problem}; {advice}")
        self.problem = problem
        self.advice = advice
        self.deferrable = deferrable
        """Whether it may wait until the value is used (an unset variable) or is a mistake in the file."""


def _expand_string(value: str, config_dir: Path | None) -> str:
    def replace(match: re.Match[str]) -> str:
        body = match.group(1)
        name, has_default, default = body.partition(":-")
        if name.startswith("env:"):
            name = name[4:]
        elif name.startswith("input:"):
            raise UnresolvedVariable(
                f"VS Code input variable ${{{body}}} cannot be prompted for by toolbridge",
                "use an environment variable instead, e.g. ${MY_TOKEN}",
            )
        if not _PLAIN_NAME.fullmatch(name):
            raise UnresolvedVariable(
                f"${{{body}}} is not a valid variable reference",
                "write ${NAME} or ${NAME:-default}",
                deferrable=False,
            )
        found = os.environ.get(name)
        if found:
            return found
        if has_default:
            return default
        if found is not None:  # set but empty: that is a value, only `:-` replaces it
            return found
        fallback = _vscode_variable(name, config_dir)
        if fallback is not None:
            return fallback
        raise UnresolvedVariable(
            f"environment variable {name!r} is not set", f"set it, or give a default with ${{{name}:-value}}"
        )

    return _VARIABLE.sub(replace, value)


def _vscode_variable(name: str, config_dir: Path | None) -> str | None:
    if name == "userHome":
        return str(Path.home())
    if name == "workspaceFolder":
        # VS Code keeps mcp.json in <workspace>/.vscode/.
        if config_dir is None:
            return str(Path.cwd())
        return str(config_dir.parent if config_dir.name == ".vscode" else config_dir)
    return None


def expand(
    value: Any,
    trail: Trail,
    config_dir: Path | None,
    on_error: Callable[[Trail, UnresolvedVariable], None],
) -> Any:
    """Expand `${...}` in every string inside `value`; `on_error` decides what an unresolved one does
    (the string is then kept as written)."""
    if isinstance(value, str):
        try:
            return _expand_string(value, config_dir)
        except UnresolvedVariable as exc:
            on_error(trail, exc)
            return value
    if isinstance(value, dict):
        return {k: expand(v, (*trail, k), config_dir, on_error) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, (*trail, i), config_dir, on_error) for i, v in enumerate(value)]
    return value


def key_path(trail: Trail) -> str:
    text = ""
    for part in trail:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text
