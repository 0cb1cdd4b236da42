"""The config sections other than servers and agents: `models`, `cache`, `server`, `routing`.

Each is validated when the file is loaded (unknown keys included); the layer that uses a section keeps
its behaviour and its defaults where they are not the config's to decide.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from toolbridge.config.limits import LimitsConfig
from toolbridge.types import ToolModeSetting, ToolSearchSetting

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "CacheConfig",
    "ModelConfig",
    "RoutingConfig",
    "ServeConfig",
    "TelemetryConfig",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765

_Seconds = Annotated[float, Field(ge=0)]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelConfig(_Section):
    """One entry of the `models` section. The provider's name is checked by the models layer, which
    knows the providers."""

    provider: str
    model: str | None = None
    """The provider's model id; not needed for `demo`."""
    base_url: str | None = None
    api_key: SecretStr | None = None
    tool_mode: ToolModeSetting = "auto"
    tool_search: ToolSearchSetting | None = None
    """Offer `search_tools` in place of many tools (`toolbridge.tools.search`); None: `auto`, unless the
    agent says otherwise."""
    dialect: str | None = None
    """The tool-call dialect the model writes in text; None: its model profile's (checked by the models
    layer, which knows the dialects)."""
    reasoning_open: bool | None = None
    """Its chat template opens reasoning in the prompt; None: its model profile's."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)
    """None: the provider's default."""
    timeout: float | None = Field(default=None, gt=0)
    """Seconds per request."""
    headers: dict[str, str] = Field(default_factory=dict)


class CacheConfig(_Section):
    """`"cache": {"ttl": 300, "tools": {"search": 60}, "servers": {"excel": 0}, "scope": "chat"}`.

    TTLs are seconds (0: no caching). What is cached and for whom is the tools layer's to decide.
    """

    ttl: _Seconds | None = None
    """None: the tools layer's default."""
    tools: dict[str, _Seconds] = Field(default_factory=dict)
    servers: dict[str, _Seconds] = Field(default_factory=dict)
    scope: Literal["chat", "shared"] = "chat"


class ServeConfig(_Section):
    """The `server` section: settings of `toolbridge serve` (command-line options override them).

    ```jsonc
    "server": {
      "tool_activity": true,        // tool calls shown as reasoning_content on /v1/chat/completions
      "auto_approve": false,        // /v1/chat/completions runs calls that need approval (else declined)
      "approval_timeout": 300,      // seconds a web run waits for an answer before declining the call
      "max_body_bytes": 1000000,    // larger request bodies are refused with 413
      "allowed_hosts": [],          // extra Host names accepted besides localhost and the bound address
      "repair_retries": 1,          // pass-through: corrective retries for calls that break the client's schemas
      "token": "${MY_TOKEN}",       // bearer token; $TOOLBRIDGE_TOKEN and --token take precedence
      "limits": {"requests_per_minute": 60, "tokens_per_day": 200000}  // per user (config/limits.py)
      "shutdown_grace": 30,         // seconds running runs get to finish on SIGTERM/SIGINT before they are interrupted
      "run_lease": 30,              // seconds a replica's runs outlive it before another marks them interrupted
      "log_format": "text"          // "json": one JSON object per log line (--log-format)
    }
    ```
    """

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
    repair_retries: int = Field(default=1, ge=0, le=5)
    """Pass-through requests (`model` names a model): how often a reply whose calls name an unknown tool
    or break the client's schema is asked for again, the problem shown to the model, before it is
    returned as it is."""
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    """Per-user limits, once users exist (`toolbridge users add`)."""
    shutdown_grace: float = Field(default=30.0, ge=0)
    """Seconds runs in progress get to finish when the server is stopped, before they are interrupted."""
    run_lease: float = Field(default=30.0, gt=0)
    """Seconds a run's owner holds it without renewing (it renews every third of that): when a replica
    dies, another marks its runs interrupted this long after its last renewal."""
    log_format: Literal["text", "json"] = "text"


class TelemetryConfig(_Section):
    """`"telemetry": {"otlp_endpoint": "http://127.0.0.1:4318"}`: where traces go over OTLP/HTTP
    ($OTEL_EXPORTER_OTLP_ENDPOINT when unset; neither: no traces are exported)."""

    otlp_endpoint: str | None = None


class RoutingConfig(_Section):
    """`"routing": {"any_source": ["appflowy"]}`: how calls find their tool."""

    any_source: list[str] = Field(default_factory=list)
    """Source names a model may put on a call that mean "wherever the tool is" (some models invent a
    source, e.g. `appflowy`); `native` and an empty source always do."""
