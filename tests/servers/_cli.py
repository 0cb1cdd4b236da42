"""Runs a test server over the transport named on the command line (stdio, http or sse)."""

from __future__ import annotations

import argparse
import socket
from typing import Any

import anyio
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp


def run(server: MCPServer[Any], *, handshake_only: bool = False) -> None:
    """`handshake_only`: over stdio, serve only the 2025-11-25 revision (`server/discover` is refused, as by
    servers written before 2026-07-28), not both."""
    parser = argparse.ArgumentParser(description=f"toolbridge test MCP server {server.name!r}")
    parser.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio")
    add_listening_options(parser)
    parser.add_argument("--sse-path", default="/sse", help="where the SSE stream is served (sse)")
    options = parser.parse_args()
    if options.transport == "stdio" and handshake_only:
        anyio.run(_serve_handshake_only, server)
    elif options.transport == "stdio":
        server.run("stdio")
    else:
        app = (
            server.streamable_http_app()
            if options.transport == "http"
            else server.sse_app(sse_path=options.sse_path)
        )
        serve_http(app, options, log_level=server.settings.log_level.lower())


def add_listening_options(parser: argparse.ArgumentParser) -> None:
    """`--port`, and `--fd`: a socket the parent bound on that port and passed down (tests/listening.py),
    so the port is the parent's from the start, never picked and then bound later by another process."""
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (http and sse)")
    parser.add_argument("--fd", type=int, help="serve on this inherited listening socket (bound to --port)")
    parser.add_argument(
        "--keep-alive", type=float, default=5.0, help="seconds an idle connection is kept (uvicorn's default)"
    )


def listening_socket(options: argparse.Namespace) -> socket.socket:
    """The socket `--fd` names, or one bound here on `--port`."""
    if options.fd is not None:
        return socket.socket(fileno=options.fd)
    return socket.create_server(("127.0.0.1", options.port))


def serve_http(app: ASGIApp, options: argparse.Namespace, *, log_level: str = "warning") -> None:
    """Serve `app` under uvicorn on the socket of `add_listening_options`' options."""
    config = uvicorn.Config(app, log_level=log_level, timeout_keep_alive=options.keep_alive)  # type: ignore[arg-type]
    uvicorn.Server(config).run(sockets=[listening_socket(options)])


async def _serve_handshake_only(server: MCPServer[Any]) -> None:
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        options = lowlevel.create_initialization_options()
        await serve_loop(lowlevel, read, write, lifespan_state=state, init_options=options)
