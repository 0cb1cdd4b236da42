"""The `gateway` section: settings of `toolbridge gateway` (command-line options override them).

```jsonc
"gateway": {
  "host": "127.0.0.1", "port": 8766,   // --http only
  "approval": "elicit",                // a call that needs approval: ask the client (elicit), refuse, allow
  "max_body_bytes": 1000000,           // --http: larger request bodies are refused with 413
  "allowed_hosts": [],                 // --http: Host names accepted besides loopback and the bound address
  "max_result_chars": 1000000,         // longer tool results are cut, with a note saying so
  "tokens": {                          // --http: each client its own bearer token and what it reaches
    "cursor": {"token": "${CURSOR_TOKEN}", "tools": {"allow": ["excel__*"]}},
    "docs": {"token": "${DOCS_TOKEN}", "servers": ["wiki"]},
    "ci": {"token": "${CI_TOKEN}"}
  }
}
```
A token's rule decides everything its clients reach: tools, and the resources, resource templates,
prompts and completions of servers. `servers` names the servers (`native`: toolbridge's own tools);
without it, a token whose `tools.allow` is set reaches the servers of the tools it allows, any other
token every server.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolbridge.config.agents import ToolFilter

__all__ = [
    "DEFAULT_GATEWAY_MAX_RESULT_CHARS",
    "DEFAULT_GATEWAY_PORT",
    "GatewayApproval",
    "GatewayConfig",
    "GatewayToken",
    "TokenReach",
]

DEFAULT_GATEWAY_PORT = 8766
DEFAULT_GATEWAY_MAX_RESULT_CHARS = 1_000_000

GatewayApproval = Literal["elicit", "refuse", "allow"]
"""What the gateway does with a call its approval policy holds back: ask the client's user through
elicitation (refused when the client cannot be asked), refuse it, or run it."""


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TokenReach(_Section):
    """What the clients holding one token may reach through the gateway."""

    tools: ToolFilter = Field(default_factory=ToolFilter)
    """The tools they may list and call (default: all the gateway offers)."""
    servers: list[str] | None = None
    """The servers whose tools (as `tools` narrows them), resources, resource templates, prompts and
    completions they reach (`native`: toolbridge's own tools). None: with `tools.allow` set, the servers
    of the tools it allows; without, every server."""

    @property
    def limits_servers(self) -> bool:
        """Whether the clients reach fewer servers than the gateway offers."""
        return self.servers is not None or self.tools.allow is not None

    @property
    def reaches_everything(self) -> bool:
        """Whether the clients reach every tool the gateway offers (no rule narrows what they reach)."""
        return not self.limits_servers and not self.tools.deny


class GatewayToken(TokenReach):
    token: str = Field(repr=False, min_length=1)


class GatewayConfig(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_GATEWAY_PORT, ge=0, le=65535)
    approval: GatewayApproval = "elicit"
    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    allowed_hosts: list[str] = Field(default_factory=list)
    max_result_chars: int = Field(default=DEFAULT_GATEWAY_MAX_RESULT_CHARS, ge=100)
    """A tool result longer than this (its text, media and structured content together) reaches the
    client cut to this many characters of text, with a note saying so."""
    tokens: dict[str, GatewayToken] = Field(default_factory=dict)
    """Named bearer tokens; with any set, every HTTP request needs one of them."""
