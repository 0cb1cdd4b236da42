"""Loading and validating config files (`mcpServers`, VS Code's `servers`, models, agents)."""

from toolbridge.config.model import Config, ServerConfig

__all__ = ["Config", "ServerConfig"]
