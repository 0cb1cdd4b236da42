"""Loading and validating config files (`mcpServers`, VS Code's `servers`, models, agents)."""

from toolbridge.config.loader import find_config_file, load_config, parse_config
from toolbridge.config.model import Config, ServerConfig

__all__ = ["Config", "ServerConfig", "find_config_file", "load_config", "parse_config"]
