"""Runs a test server over the transport named on the command line (stdio, http or sse)."""

from __future__ import annotations

import argparse
from typing import Any

from mcp.server.mcpserver import MCPServer


def run(server: MCPServer[Any]) -> None:
    parser = argparse.ArgumentParser(description=f"toolbridge test MCP server {server.name!r}")
    parser.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (http and sse)")
    options = parser.parse_args()
    if options.transport == "stdio":
        server.run("stdio")
    elif options.transport == "http":
        server.run("streamable-http", host="127.0.0.1", port=options.port)
    else:
        server.run("sse", host="127.0.0.1", port=options.port)
