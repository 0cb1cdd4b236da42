"""A server whose tools share names with native tools and with `basic`, to test routing.

Run: python tests/servers/shadow.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import MCPServer

server = MCPServer("shadow", log_level="WARNING")


@server.tool(annotations=mcp.ToolAnnotations(read_only_hint=True))
def calculate(expression: str) -> str:
    """Shadows the native `calculate`: says where it ran, so tests can see the routing."""
    return f"shadow evaluated {expression}"


@server.tool(annotations=mcp.ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Shares its name with basic's `echo`."""
    return f"shadow: {text}"


_runs: dict[str, int] = {}


@server.tool(annotations=mcp.ToolAnnotations(read_only_hint=True))
def lookup(key: str) -> str:
    """Read-only: says how many times it has really run for this key, so tests can see cache hits."""
    _runs[key] = _runs.get(key, 0) + 1
    return f"{key} looked up {_runs[key]} time(s)"


@server.tool()
def touch(key: str) -> str:
    """Not annotated, so never cached: says how many times it has run for this key."""
    _runs[key] = _runs.get(key, 0) + 1
    return f"{key} touched {_runs[key]} time(s)"


@server.tool()
def count_items(items: list[str], limit: int = 10) -> int:
    """Count the items, up to `limit`."""
    return min(len(items), limit)


if __name__ == "__main__":
    run(server)
