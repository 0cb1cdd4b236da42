"""Validated configuration values. The loader (`toolbridge.config.loader`) builds these from files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from toolbridge.config._document import Unresolved
from toolbridge.config._server_auth import ServerAuth
from toolbridge.config.agents import DEFAULT_AGENT_NAME, AgentDefinition
from toolbridge.config.asks import SamplingConfig
from toolbridge.config.gateway import GatewayConfig
from toolbridge.config.sections import CacheConfig, ModelConfig, RoutingConfig, ServeConfig, TelemetryConfig
from toolbridge.errors import ConfigError

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_DISCOVER_TIMEOUT",
    "DEFAULT_PING_INTERVAL",
    "Config",
    "LogLevel",
    "ServerConfig",
    "Transport",
]

Transport = Literal["stdio", "sse", "streamable-http"]
LogLevel = Literal["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
"""MCP's log levels (RFC 5424's), lowest first."""
ProtocolChoice = Literal["auto", "2025-11-25"]
"""`auto`: the newest revision the server speaks (2026-07-28 when it answers `server/discover`);
`2025-11-25`: always the `initialize` handshake (for servers whose tools ask the client mid-call)."""

DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_PING_INTERVAL = 30.0
DEFAULT_DISCOVER_TIMEOUT = 1.0


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
    auth: ServerAuth | None = None
    """OAuth settings beyond what discovery finds (see `config._server_auth`)."""
    # options
    enabled: bool = True
    timeout: float = DEFAULT_CALL_TIMEOUT
    """Default per-call timeout in seconds; a call can override it."""
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    """Seconds allowed for starting/connecting and the MCP initialize handshake."""
    timeout_resets_on_progress: bool = False
    """A progress notification from the server restarts the call's timeout (long calls that report)."""
    log_level: LogLevel | None = None
    """Sent as `logging/setLevel` at connect (when the server offers logging); None: the server's own."""
    ping_interval: float = DEFAULT_PING_INTERVAL
    """Seconds an HTTP session may stay idle before a ping checks it is still alive."""
    sse_fallback: bool = False
    """Streamable HTTP first, the older SSE transport if the server answers like an old one (set when
    the config names no `type`)."""
    protocol: ProtocolChoice = "auto"
    """Which MCP revision to speak; see `ProtocolChoice`."""
    discover_timeout: float = DEFAULT_DISCOVER_TIMEOUT
    """Seconds `auto` waits for an answer to `server/discover` before it also tries `initialize` (a server
    that refuses that as one of the 2026 revision is probed again, patiently)."""
    shared: bool = True
    """`toolbridge gateway` lets all its clients share one session with this server (False: each
    client session gets a session of its own, closed when that client's session ends: for servers
    that keep state per client)."""
    tools_allow: list[str] | None = None
    """If set, only these tools (names or fnmatch patterns, see `config.tool_rules`) are exposed."""
    tools_deny: list[str] = Field(default_factory=list)
    """Tools (names or fnmatch patterns, see `config.tool_rules`) never exposed."""
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    """How its `sampling/createMessage` requests are answered (see `config.asks`)."""
    roots: list[str] | None = None
    """Folders (paths or file:// URIs) it is told about; None: the agent's (or the run's default)."""
    unresolved: tuple[str, ...] = ()
    """Why the server cannot be started yet: `${VAR}`s in its settings that are not set (whole messages,
    naming the file, the key and the variable). Only using the server fails on them."""

    def describe(self) -> str:
        """A one-line, secret-free description of where the server is (for errors and listings)."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return self.url or ""


class Config(BaseModel):
    """Everything read from the config file, validated section by section when it was loaded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    servers: dict[str, ServerConfig] = Field(default_factory=dict)
    models: dict[str, ModelConfig] = Field(default_factory=dict)
    default_model: str | None = None
    agents: dict[str, AgentDefinition] = Field(default_factory=dict)
    cache: CacheConfig = Field(default_factory=CacheConfig)
    server: ServeConfig = Field(default_factory=ServeConfig)
    gateway: GatewayConfig = Field(default_factory=GatewayConfig)
    """Settings of `toolbridge serve` (the `server` section; MCP servers are `servers`)."""
    database: str | None = None
    """Database URL or SQLite file path."""
    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    telemetry: TelemetryConfig = Field(default_factory=TelemetryConfig)
    inputs: list[dict[str, Any]] = Field(default_factory=list)
    """VS Code's prompted inputs, kept as written: toolbridge cannot prompt for them."""
    path: Path | None = None
    """The file this was read from, if any."""
    unresolved: tuple[Unresolved, ...] = ()
    """`${VAR}`s that were not set, outside the MCP servers: they fail only where their section is used."""
    notes: tuple[str, ...] = ()
    """What loading left out and the user should know (another app's settings in its own file)."""

    @model_validator(mode="after")
    def _agents_are_named_by_their_keys(self) -> Config:
        for name, definition in self.agents.items():
            if definition.name != name:
                self.agents[name] = definition.model_copy(update={"name": name})
        return self

    @property
    def agent_names(self) -> list[str]:
        """The agents a run can name from this config: `default` first, then the configured ones."""
        return [DEFAULT_AGENT_NAME, *(name for name in self.agents if name != DEFAULT_AGENT_NAME)]

    def check_resolved(self, key: str, *, used_by: str) -> None:
        """Raise `ConfigError` if a `${VAR}` at or under `key` (like `models.fast`) was not set.

        `used_by` says who needs it, for the message: "model 'fast'".
        """
        for value in self.unresolved:
            if value.key == key or value.key.startswith((f"{key}.", f"{key}[")):
                raise ConfigError(
                    f"{value.problem} ({used_by} uses it); {value.advice}",
                    path=str(self.path) if self.path is not None else None,
                    key=value.key,
                )
