"""Connections to MCP servers, on the official SDK: sessions kept per server, reconnects, timeouts.

- `ServerPool`: all servers of a config; owns their sessions and shuts them down on exit.
- `ServerConnection`: one server, one kept session; converts SDK types to `ToolSpec`/`ToolResult`.
- `ConnectionState`: what `ServerConnection.state` says.
- `ServerContent` (`connection.content`): the server's resources and prompts, as `ResourceInfo`,
  `ResourceTemplateInfo`, `PromptInfo` and `PromptMessages`.
- `ListKind`, `ListChangeHandler`: what a server says changed (`on_list_changed` of the pool).
- `CallOutcome`: a call's neutral result beside the server's own `CallToolResult` (`call_tool_mcp`).
- `ToolProgress`: a server's progress report on a call (`call_tool(..., on_progress=...)`).

Client features (sampling, elicitation, roots, logs, OAuth sign-in) reach every session through
`client_features.ClientFeatures`; OAuth lives in `toolbridge.mcp.oauth`.
"""

from toolbridge.mcp._listings import ListChangeHandler, ListKind
from toolbridge.mcp._tool_call import CallOutcome
from toolbridge.mcp.connection import ConnectionState, ServerConnection
from toolbridge.mcp.pool import ServerPool
from toolbridge.mcp.progress import ProgressHandler, ToolProgress
from toolbridge.mcp.resources_and_prompts import (
    PromptArgumentInfo,
    PromptInfo,
    PromptMessages,
    ResourceInfo,
    ResourceTemplateInfo,
    ServerContent,
)

__all__ = [
    "CallOutcome",
    "ConnectionState",
    "ListChangeHandler",
    "ListKind",
    "ProgressHandler",
    "PromptArgumentInfo",
    "PromptInfo",
    "PromptMessages",
    "ResourceInfo",
    "ResourceTemplateInfo",
    "ServerConnection",
    "ServerContent",
    "ServerPool",
    "ToolProgress",
]
