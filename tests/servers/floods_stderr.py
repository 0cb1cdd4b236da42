"""A server whose `flood` tool writes megabytes to stderr in a tight loop, then answers.

Run: python tests/servers/floods_stderr.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import os
import sys

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
from _cli import run
from mcp.server.mcpserver import MCPServer

server = MCPServer("floods_stderr", log_level="WARNING")


@server.tool()
def flood(megabytes: int) -> str:
    """Write `megabytes` MB of numbered lines to stderr as fast as possible; the last says it is last."""
    line = "x" * 1000
    for number in range(megabytes * 1000):
        sys.stderr.write(f"{number} {line}\n")
    sys.stderr.write("the last line of the flood\n")
    sys.stderr.flush()
    return "flooded"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


if __name__ == "__main__":
    run(server)
