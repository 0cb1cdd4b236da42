"""A server for the protocol-revision tests: a tool that asks its client mid-call the 2025-11-25 way,
and one that announces new tools only on `subscriptions/listen` streams, the 2026-07-28 way.
With --mute-listen it accepts `subscriptions/listen` but never acknowledges the stream.

Run: python tests/servers/revisions.py [--mute-listen] [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import sys
import warnings

import anyio
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("revisions", log_level="WARNING")
warnings.filterwarnings("ignore", message=".*deprecated.*")


@server.tool()
async def roots_mid_call(ctx: Context) -> str:
    """Ask the client for its roots with a request of the server's own (the 2025-11-25 way)."""
    listed = await ctx.session.list_roots()
    return "\n".join(str(root.uri) for root in listed.roots) or "(no roots)"


@server.tool()
async def add_tool_quietly(name: str, ctx: Context) -> str:
    """Register a tool called `name` and announce it on `subscriptions/listen` streams alone."""
    server.add_tool(lambda text: text, name=name, description=f"added at run time: {name}")
    await ctx.notify_tools_changed()
    return f"added {name}"


async def never_acknowledge(_context: object, _params: mcp.SubscriptionsListenRequestParams) -> None:
    await anyio.sleep_forever()


if __name__ == "__main__":
    if "--mute-listen" in sys.argv:
        sys.argv.remove("--mute-listen")
        lowlevel = server._lowlevel_server
        lowlevel.add_request_handler(
            "subscriptions/listen", mcp.SubscriptionsListenRequestParams, never_acknowledge
        )
    run(server)
