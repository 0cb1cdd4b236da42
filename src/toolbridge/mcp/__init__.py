"""Connections to MCP servers, on the official SDK: sessions kept per server, reconnects, timeouts.

- `ServerPool`: all servers of a config; owns their sessions and shuts them down on exit.
- `ServerConnection`: one server, one kept session; converts SDK types to `ToolSpec`/`ToolResult`.
- `ConnectionState`: what `ServerConnection.state` says.

Client features (sampling, elicitation, roots, logs, OAuth sign-in) reach every session through
`client_features.ClientFeatures`; OAuth lives in `toolbridge.mcp.oauth`.
"""

from toolbridge.mcp.connection import ConnectionState, ServerConnection
from toolbridge.mcp.pool import ServerPool

__all__ = ["ConnectionState", "ServerConnection", "ServerPool"]
