"""How a rule in the config names a tool, and the one matcher every rule consumer uses.

Approval rules, `tools.allow` / `tools.deny` (of a server and of an agent) and `cache.tools` all name
tools the same way. A rule may be written as

- the tool's own name on its server, `delete_file`: it keeps applying when another server's tool of the
  same name makes toolbridge expose this one as `h__delete_file`;
- the qualified form, `h__delete_file` (the name a collision exposes), or `h:delete_file`;
- an fnmatch pattern over any of these: `delete_*`, `h:*`, `*__delete_file`.

A rule therefore follows the tool, never the name it happens to be shown under.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from toolbridge.types import ToolSpec, qualified_name

__all__ = ["SERVER_SEPARATOR", "ToolRef", "allowed", "rule_for"]

SERVER_SEPARATOR = ":"
"""Joins a server and a tool's own name in a rule: `h:delete_file`."""

Rule = TypeVar("Rule")


@dataclass(frozen=True)
class ToolRef:
    """A tool as rules name it: its source (a server, or `native`) and the name that source gives it."""

    source: str
    name: str

    @classmethod
    def of(cls, spec: ToolSpec) -> ToolRef:
        """The tool behind an exposed definition (`h__delete_file` -> `h`, `delete_file`)."""
        return cls(spec.source, spec.original_name or spec.name)

    @property
    def qualified_names(self) -> tuple[str, str]:
        """The names that say which source's tool is meant: `h:delete_file`, `h__delete_file`."""
        return f"{self.source}{SERVER_SEPARATOR}{self.name}", qualified_name(self.source, self.name)

    @property
    def names(self) -> tuple[str, ...]:
        """Every name a rule may use for this tool, the most specific first. The exposed name is always
        one of them: it is either the tool's own name or its qualified form."""
        return (*self.qualified_names, self.name)

    def matches(self, pattern: str) -> bool:
        """Whether `pattern` (a name in any form, or an fnmatch pattern over one) names this tool."""
        return any(fnmatch.fnmatchcase(name, pattern) for name in self.names)


def rule_for(rules: Mapping[str, Rule], tool: ToolRef) -> tuple[str, Rule] | None:
    """The rule for `tool` and the key it is written under, or None.

    A key naming the tool with its source (`h:delete_file`) beats one naming it alone (`delete_file`),
    which beats a pattern; among patterns the first that matches, in the order written.
    """
    for name in tool.names:
        if name in rules:
            return name, rules[name]
    for pattern, rule in rules.items():
        if tool.matches(pattern):
            return pattern, rule
    return None


def allowed(tool: ToolRef, allow: Sequence[str] | None, deny: Sequence[str]) -> bool:
    """An allow/deny filter: never what `deny` names, and only what `allow` names when it is set."""
    if any(tool.matches(pattern) for pattern in deny):
        return False
    return allow is None or any(tool.matches(pattern) for pattern in allow)
