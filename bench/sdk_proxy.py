"""The least a gateway built on the official SDK can cost: a bare proxy, for bench/gateway.py to measure.

A low-level SDK `Server` whose `tools/list` and `tools/call` are forwarded to one upstream through the
SDK's `Client`, and nothing else: no names, validation, approval, cache, call log or forwarding of what
the upstream asks. Any gateway adds at least this second hop (one more SDK server and client), so
bench/gateway.py reads toolbridge's ratio against this one, measured in the same run.

Run: python bench/sdk_proxy.py --config FILE [--http --port N]; FILE is a toolbridge config whose
`mcpServers` holds the upstream alone (a stdio `command`, or an HTTP `url`). Serves stdio, or streamable
HTTP at http://127.0.0.1:N/mcp.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mcp
import uvicorn
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def upstream_target(config: Path) -> str | StdioServerParameters:
    (entry,) = json.loads(config.read_text(encoding="utf-8"))["mcpServers"].values()
    if "url" in entry:
        return str(entry["url"])
    return StdioServerParameters(command=entry["command"], args=entry.get("args", []))


async def serve(config: Path, http_port: int | None) -> None:
    async with Client(upstream_target(config)) as upstream:

        async def list_tools(
            context: ServerRequestContext[Any], params: mcp.PaginatedRequestParams | None
        ) -> mcp.ListToolsResult:
            return await upstream.list_tools()

        async def call_tool(
            context: ServerRequestContext[Any], params: mcp.CallToolRequestParams
        ) -> mcp.CallToolResult:
            return await upstream.call_tool(params.name, params.arguments or {})

        server = Server("sdk-proxy", on_list_tools=list_tools, on_call_tool=call_tool)
        if http_port is None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())
        else:
            app = server.streamable_http_app()
            await uvicorn.Server(
                uvicorn.Config(app, host="127.0.0.1", port=http_port, log_level="warning")
            ).serve()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    options = parser.parse_args()
    anyio.run(serve, options.config, options.port if options.http else None)
