"""Tools: where they come from (`ToolSource`), the registry that finds them, the one pipeline every call
takes (`ToolPipeline`, `CallContext`), argument validation, native tools, Python functions as tools, and
the servers' resources and prompts (`ContentCatalog`)."""

from toolbridge.tools._suggest import closest_names
from toolbridge.tools.approval import ApprovalRequest, Approver
from toolbridge.tools.apps import app_may_call
from toolbridge.tools.function import FunctionTool, tool
from toolbridge.tools.native import native_tools
from toolbridge.tools.pipeline import (
    CallContext,
    CallDeferred,
    Caller,
    CallObserver,
    CallRecord,
    ToolPipeline,
)
from toolbridge.tools.registry import ToolFilter, ToolRegistry
from toolbridge.tools.resource_and_prompt_catalog import ContentCatalog, Listing, template_pattern
from toolbridge.tools.sources import FunctionSource, ServerSource, ToolSource
from toolbridge.tools.toolbox import ServerStatus, Toolbox
from toolbridge.tools.validation import schema_problem, validate_arguments

__all__ = [
    "ApprovalRequest",
    "Approver",
    "CallContext",
    "CallDeferred",
    "CallObserver",
    "CallRecord",
    "Caller",
    "ContentCatalog",
    "FunctionSource",
    "FunctionTool",
    "Listing",
    "ServerSource",
    "ServerStatus",
    "ToolFilter",
    "ToolPipeline",
    "ToolRegistry",
    "ToolSource",
    "Toolbox",
    "app_may_call",
    "closest_names",
    "native_tools",
    "schema_problem",
    "template_pattern",
    "tool",
    "validate_arguments",
]
