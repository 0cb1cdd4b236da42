"""toolbridge: let any LLM use tools through the Model Context Protocol, reliably."""

from typing import TYPE_CHECKING, Any

from toolbridge._version import __version__
from toolbridge.errors import (
    ConfigError,
    ConnectionLostError,
    ModelError,
    ServerError,
    ServerStartError,
    ServerTimeoutError,
    StoreError,
    ToolArgumentsError,
    ToolbridgeError,
    ToolError,
    ToolsNotSupportedError,
    UnknownToolError,
    UsageError,
)
from toolbridge.types import ToolCall, ToolResult, ToolSpec

if TYPE_CHECKING:
    from toolbridge.agent import Agent, RunResult
    from toolbridge.tools import Toolbox

__all__ = [
    "Agent",
    "ConfigError",
    "ConnectionLostError",
    "ModelError",
    "RunResult",
    "ServerError",
    "ServerStartError",
    "ServerTimeoutError",
    "StoreError",
    "ToolArgumentsError",
    "ToolCall",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Toolbox",
    "ToolbridgeError",
    "ToolsNotSupportedError",
    "UnknownToolError",
    "UsageError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    # The agent pulls in the MCP SDK and more: `import toolbridge` stays cheap until it is used.
    if name in ("Agent", "RunResult"):
        from toolbridge import agent

        return getattr(agent, name)
    if name == "Toolbox":
        from toolbridge.tools import Toolbox

        return Toolbox
    raise AttributeError(f"module 'toolbridge' has no attribute {name!r}")
