"""Agent definitions: who the agent is, which model and tools it uses, its limits and approval policy.

Agents are defined in the config's `agents` section, one entry per agent (all keys optional), or stored
in the database (`toolbridge agents create`):

```jsonc
"agents": {
  "excel-helper": {
    "description": "Answers questions about spreadsheets.",
    "instructions": "Be brief. Quote the cells you used.",
    "model": "gpt-4o",                       // a model name the models layer resolves
    "tool_calling": true,                    // false: a plain chat model, no tools at all
    "tool_mode": "auto",                     // overrides the model's own: native | prompt | auto | code
    "tool_search": "auto",                   // offer search_tools instead of many tools: auto | true | false
    "pinned_tools": ["get_current_time"],    // offered even when searching
    "servers": ["excel"],                    // MCP servers it may use (native tools always); absent: all
    "tools": {"allow": ["read_*", "get_current_time"], "deny": ["delete_*"]},
    "max_steps": 10,                         // model requests per run
    "max_result_chars": 20000,               // longer tool results are cut, with a note saying so
    "call_timeout": 30,                      // seconds per tool call; absent: the server's own timeout
    "approval": {
      "default": "auto",                     // auto: ask for destructiveHint tools, never for readOnlyHint
      "servers": {"excel": "always"},
      "tools": {"write_file": "never", "excel__delete_*": "always"}
    },
    "roots": ["~/sheets"]                    // folders its servers may work in (MCP roots)
  }
}
```

An agent named `default` replaces the built-in default agent. Keys may also be written in camelCase
(`maxSteps`), as in VS Code-style files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from toolbridge.config.tool_rules import ToolRef, allowed, rule_for
from toolbridge.types import ToolModeSetting, ToolSearchSetting, ToolSpec

__all__ = [
    "DEFAULT_AGENT_NAME",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_MAX_STEPS",
    "HIDDEN_FROM_MODELS",
    "AgentDefinition",
    "ApprovalPolicy",
    "ApprovalRule",
    "ToolFilter",
]

DEFAULT_AGENT_NAME = "default"
DEFAULT_MAX_STEPS = 10
DEFAULT_MAX_RESULT_CHARS = 20_000
HIDDEN_FROM_MODELS = (
    "its server shows it only to an app's UI (MCP Apps visibility), never to a model; use another tool"
)

ApprovalRule = Literal["auto", "always", "never"]
"""`always`: ask before every call. `never`: never ask. `auto`: ask only for tools the server marks
destructive (`destructiveHint: true` and not `readOnlyHint: true`)."""


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_camel, populate_by_name=True)


class ToolFilter(_Section):
    """Which tools an agent may use: names in any form `tool_rules` accepts (`read_data`,
    `excel__read_data`, `excel:read_data`) or fnmatch patterns over them."""

    allow: list[str] | None = None
    """If set, only these tools. Absent: every tool of the agent's servers."""
    deny: list[str] = Field(default_factory=list)
    """Never these tools, whatever `allow` says."""

    def allows(self, tool: ToolSpec) -> bool:
        return allowed(ToolRef.of(tool), self.allow, self.deny)


class ApprovalPolicy(_Section):
    """Which calls wait for the user's approval. A tool rule beats a server rule beats the default."""

    default: ApprovalRule = "auto"
    tools: dict[str, ApprovalRule] = Field(default_factory=dict)
    """Tool -> rule, named in any form `tool_rules` accepts (`delete_file`, `h__delete_file`,
    `h:delete_file`, a pattern). A name with its server beats a bare name beats a pattern (the first)."""
    servers: dict[str, ApprovalRule] = Field(default_factory=dict)
    """Server name (`native` for Python tools) -> rule."""

    def rule_for(self, tool: ToolSpec) -> tuple[ApprovalRule, str]:
        """The rule that applies to `tool`, and where it comes from (for the approval prompt)."""
        ref = ToolRef.of(tool)
        found = rule_for(self.tools, ref)
        if found is not None:
            key, rule = found
            what = "tool" if key in ref.names else "tools"
            return rule, f"the approval rule for {what} {key!r}"
        if tool.source in self.servers:
            return self.servers[tool.source], f"the approval rule for server {tool.source!r}"
        return self.default, "the default approval rule"

    def approval_reason(self, tool: ToolSpec) -> str | None:
        """Why a call to `tool` needs the user's approval; None when it does not."""
        rule, origin = self.rule_for(tool)
        if rule == "always":
            return f"{origin} says 'always'"
        if rule == "never":
            return None
        hints = tool.annotations
        # MCP: destructiveHint is meaningful only when the tool is not read-only.
        if hints.destructive_hint and not hints.read_only_hint:
            return "the tool is marked as destructive"
        return None


class AgentDefinition(_Section):
    """Everything that makes an agent, apart from the live model and tools it runs with."""

    name: str = DEFAULT_AGENT_NAME
    description: str = ""
    instructions: str = ""
    """Instructions and personality, as written; they open the system prompt."""
    model: str | None = None
    """A model name resolved by the models layer; None: the configured default model."""
    tool_calling: bool = True
    tool_mode: ToolModeSetting | None = None
    """None: whatever the model is configured with."""
    tool_search: ToolSearchSetting | None = None
    """Offer the model `search_tools` in place of its tools, and the tools its searches find
    (`toolbridge.tools.search`); None: as the model is configured, else `auto`."""
    pinned_tools: list[str] = Field(default_factory=list)
    """Tools offered from the start also when searching (by the name the model sees)."""
    servers: list[str] | None = None
    """MCP servers whose tools the agent may use (native tools are always offered); None: all."""
    tools: ToolFilter = Field(default_factory=ToolFilter)
    max_steps: int = Field(default=DEFAULT_MAX_STEPS, ge=1)
    max_result_chars: int = Field(default=DEFAULT_MAX_RESULT_CHARS, ge=100)
    call_timeout: float | None = Field(default=None, gt=0)
    approval: ApprovalPolicy = Field(default_factory=ApprovalPolicy)
    roots: list[str] | None = None
    """Folders (paths or file:// URIs) its servers are told they may work in (a server's own `roots`
    wins); None: the current folder in the CLI, none in `toolbridge serve`."""

    @field_validator("tools", mode="before")
    @classmethod
    def _a_list_is_an_allow_list(cls, value: Any) -> Any:
        return {"allow": value} if isinstance(value, list) else value

    def offers(self, tool: ToolSpec) -> bool:
        """Whether this agent lets the model see and call `tool`."""
        if not self.tool_calling:
            return False
        if self.servers is not None and tool.source != "native" and tool.source not in self.servers:
            return False
        return self.tools.allows(tool)

    @property
    def left_out_reason(self) -> str:
        """Why a caller of this agent may not use a tool it does not offer (the same words everywhere)."""
        return f"the agent {self.name!r}'s tool rules (its servers, tools.allow and tools.deny) leave it out"

    def why_not_offered(self, tool: ToolSpec) -> str | None:
        """Why this agent does not let its caller (its model) use `tool` (a `toolbridge.tools.ToolFilter`
        for the call pipeline's `CallContext.allows`); None when it offers it."""
        if "model" not in tool.visibility:
            return HIDDEN_FROM_MODELS
        return None if self.offers(tool) else self.left_out_reason

    def select_tools(self, tools: Sequence[ToolSpec]) -> list[ToolSpec]:
        """The tools its model is offered: those it `offers` and that their server shows to models."""
        return [tool for tool in tools if "model" in tool.visibility and self.offers(tool)]
