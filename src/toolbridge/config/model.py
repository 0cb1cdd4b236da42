"""Validated configuration values. The loader (`toolbridge.config.loader`) builds these from files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_CONNECT_TIMEOUT", "Config", "ServerConfig", "Transport"]

Transport = Literal["stdio", "sse", "streamable-http"]

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 30.0


class ServerConfig(BaseModel):
    """One MCP server: how to reach it and what of it to expose."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    transport: Transport
    # stdio
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    # sse / streamable-http
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    # options
    enabled: bool = True
    timeout: float = DEFAULT_CALL_TIMEOUT
    """Default per-call timeout in seconds; a call can override it."""
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    """Seconds allowed for starting/connecting and the MCP initialize handshake."""
    tools_allow: list[str] | None = None
    """If set, only these tools (names or fnmatch patterns) are exposed."""
    tools_deny: list[str] = Field(default_factory=list)
    """Tools (names or fnmatch patterns) never exposed."""

    def describe(self) -> str:
        """A one-line, secret-free description of where the server is (for errors and listings)."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return self.url or ""


class Config(BaseModel):
    """Everything read from the config file. Sections for models and agents are kept raw until used."""

    model_config = ConfigDict(frozen=True)

    servers: dict[str, ServerConfig] = Field(default_factory=dict)
    path: Path | None = None
    """The file this was read from, if any."""
    raw: dict[str, Any] = Field(default_factory=dict)
    """The whole file after `${VAR}` expansion, for sections read by later layers."""
