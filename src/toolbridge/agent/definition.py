"""The agent definition (see `toolbridge.config.agents` for its keys), and finding one in a config."""

from __future__ import annotations

import difflib

from toolbridge.config.agents import (
    DEFAULT_AGENT_NAME,
    DEFAULT_MAX_RESULT_CHARS,
    DEFAULT_MAX_STEPS,
    AgentDefinition,
    ApprovalPolicy,
    ApprovalRule,
    ToolFilter,
)
from toolbridge.config.model import Config
from toolbridge.errors import ConfigError

__all__ = [
    "DEFAULT_AGENT_NAME",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_MAX_STEPS",
    "AgentDefinition",
    "ApprovalPolicy",
    "ApprovalRule",
    "ToolFilter",
    "load_agent_definition",
]


def load_agent_definition(config: Config, name: str | None = None) -> AgentDefinition:
    """The agent called `name` from `config` (None: `default`, or the built-in default agent).

    The config validated every definition when it was loaded; this raises `ConfigError` when the agent
    uses a `${VAR}` that is not set, or lists the defined agents when there is no agent by that name.
    """
    where = str(config.path) if config.path is not None else None
    wanted = name or DEFAULT_AGENT_NAME
    if wanted not in config.agents:
        if wanted == DEFAULT_AGENT_NAME:
            return AgentDefinition()
        defined = sorted(config.agents)
        close = difflib.get_close_matches(wanted, defined, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        listed = ", ".join(defined) if defined else "none (add an 'agents' section to the config)"
        raise ConfigError(f"no agent named {wanted!r}; {hint}defined agents: {listed}", path=where)
    config.check_resolved(f"agents.{wanted}", used_by=f"agent {wanted!r}")
    return config.agents[wanted]
