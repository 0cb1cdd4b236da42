"""toolbridge: let any LLM use tools through the Model Context Protocol, reliably."""

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

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ConnectionLostError",
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
