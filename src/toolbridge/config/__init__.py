"""Loading and validating config files: MCP servers (`mcpServers`, VS Code's `servers`), models, agents,
the cache, the HTTP server's settings, the database and tool routing."""

from toolbridge.config.agents import AgentDefinition, ApprovalPolicy, ApprovalRule, ToolFilter
from toolbridge.config.loader import find_config_file, known_servers, load_config, parse_config
from toolbridge.config.model import Config, ServerConfig
from toolbridge.config.sections import CacheConfig, ModelConfig, RoutingConfig, ServeConfig, TelemetryConfig
from toolbridge.config.tool_rules import ToolRef

__all__ = [
    "AgentDefinition",
    "ApprovalPolicy",
    "ApprovalRule",
    "CacheConfig",
    "Config",
    "ModelConfig",
    "RoutingConfig",
    "ServeConfig",
    "ServerConfig",
    "TelemetryConfig",
    "ToolFilter",
    "ToolRef",
    "find_config_file",
    "known_servers",
    "load_config",
    "parse_config",
]
