"""Tools: the registry and routing, argument validation, native tools, and Python functions as tools."""

from toolbridge.tools.function import FunctionTool, tool
from toolbridge.tools.native import native_tools
from toolbridge.tools.registry import ToolRegistry
from toolbridge.tools.toolbox import ServerStatus, Toolbox
from toolbridge.tools.validation import validate_arguments

__all__ = [
    "FunctionTool",
    "ServerStatus",
    "ToolRegistry",
    "Toolbox",
    "native_tools",
    "tool",
    "validate_arguments",
]
