"""A server behind a bearer token, answering the way hosted servers that need sign-in do: HTTP 401
without an `Authorization` header, 403 with a token other than `Bearer letmein`.

Run: python tests/servers/guarded.py --transport http|sse --port N
"""

from __future__ import annotations

import argparse

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
from _cli import add_listening_options, serve_http
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

server = MCPServer("guarded", log_level="WARNING")


@server.tool()
def secret() -> str:
    """The secret, for those who may see it."""
    return "the eagle has landed"


def guarded(app: ASGIApp) -> ASGIApp:
    async def guard(scope: Scope, receive: Receive, send: Send) -> None:
        token = dict(scope.get("headers", [])).get(b"authorization")
        if scope["type"] == "http" and token != b"Bearer letmein":
            status = 401 if token is None else 403
            start = {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"text/plain")],
            }
            await send(start)
            await send({"type": "http.response.body", "body": b"sign in first"})
            return
        await app(scope, receive, send)

    return guard


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["http", "sse"], default="http")
    add_listening_options(parser)
    options = parser.parse_args()
    app = server.streamable_http_app() if options.transport == "http" else server.sse_app()
    serve_http(guarded(app), options)
