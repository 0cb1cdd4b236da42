"""The server's settings: the config's `server` section, overridden by command-line options.

```jsonc
"server": {
  "tool_activity": true,        // tool calls shown as reasoning_content on /v1/chat/completions
  "auto_approve": false,        // /v1/chat/completions runs calls that need approval (else declined)
  "approval_timeout": 300,      // seconds a web run waits for an answer before declining the call
  "max_body_bytes": 1000000,    // larger request bodies are refused with 413
  "allowed_hosts": [],          // extra Host names accepted besides localhost and the bound address
  "token": "${MY_TOKEN}"        // bearer token; $TOOLBRIDGE_TOKEN and --token take precedence
}
```
"""

from __future__ import annotations

import ipaddress
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from toolbridge.config import Config
from toolbridge.errors import ConfigError

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "TOKEN_ENV_VAR",
    "ServerSettings",
    "is_loopback",
    "settings_from_config",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_ENV_VAR = "TOOLBRIDGE_TOKEN"
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


class ServerSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = DEFAULT_HOST
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    token: str | None = Field(default=None, repr=False)
    """Bearer token every API request must carry; None: no token (loopback only)."""
    tool_activity: bool = True
    auto_approve: bool = False
    approval_timeout: float = Field(default=300.0, gt=0)
    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    allowed_hosts: list[str] = Field(default_factory=list)
    keepalive_interval: float = Field(default=15.0, gt=0)
    """Seconds between SSE comments on an idle event stream, so proxies and browsers keep it open."""

    def accepted_hosts(self) -> set[str]:
        """`Host` header values accepted: loopback names and the bound address, each with the port."""
        bound = f"[{self.host}]" if ":" in self.host else self.host
        names = {*LOOPBACK_NAMES, *self.allowed_hosts}
        if not _is_wildcard(self.host):
            names.add(bound)
        accepted = {f"{name}:{self.port}".lower() for name in names}
        if self.port == 80:
            accepted |= {name.lower() for name in names}
        return accepted

    def check_bind(self) -> None:
        """Refuse to listen beyond this machine without a token: anyone who can reach it could use the tools."""
        if not is_loopback(self.host) and not self.token:
            raise ConfigError(
                f"refusing to listen on {self.host} without a token: anyone who can reach this address "
                f"could run your tools. Pass --token (or set ${TOKEN_ENV_VAR}), or bind to 127.0.0.1."
            )


def settings_from_config(config: Config, **overrides: Any) -> ServerSettings:
    """The config's `server` section, then `$TOOLBRIDGE_TOKEN`, then `overrides` (None values ignored)."""
    section = config.raw.get("server", {})
    where = str(config.path) if config.path else None
    if not isinstance(section, dict):
        raise ConfigError("expected an object of server settings", path=where, key="server")
    values: dict[str, Any] = {**section}
    if os.environ.get(TOKEN_ENV_VAR):
        values["token"] = os.environ[TOKEN_ENV_VAR]
    values.update({key: value for key, value in overrides.items() if value is not None})
    try:
        return ServerSettings.model_validate(values)
    except ValidationError as error:
        problem = error.errors()[0]
        key = ".".join(str(part) for part in problem["loc"])
        raise ConfigError(problem["msg"], path=where, key=f"server.{key}") from error


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")
