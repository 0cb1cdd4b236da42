"""toolbridge: let any LLM use tools through the Model Context Protocol, reliably."""

__version__ = "0.1.0"  # first: submodules read it (the MCP client reports it) while this file imports

from toolbridge.agent import Agent, RunResult
from toolbridge.errors import (
    ConfigError,
    ConnectionLostError,
    ServerError,
    ServerStartError,
    ServerTimeoutError,
    ToolArgumentsError,
    ToolbridgeError,
    ToolError,
    UnknownToolError,
)
from toolbridge.types import ToolCall, ToolResult, ToolSpec

__all__ = [
    "Agent",
    "ConfigError",
    "ConnectionLostError",
    "RunResult",
    "ServerError",
    "ServerStartError",
    "ServerTimeoutError",
    "ToolArgumentsError",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "ToolbridgeError",
    "UnknownToolError",
    "__version__",
]
