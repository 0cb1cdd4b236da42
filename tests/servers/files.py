"""Files in a directory the test names: a plain `read_file` and a `delete_file` that really deletes.

Run twice under two names, its tools collide and are exposed as `a__delete_file`, `b__delete_file`:
the tests check that config rules written for `delete_file` still apply (a file that survives shows
that the call did not run).

Run: python tests/servers/files.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

from pathlib import Path

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
from _cli import run
from mcp.server.mcpserver import MCPServer

server = MCPServer("files", log_level="WARNING")


@server.tool()
def read_file(path: str) -> str:
    """The text of the file at `path`."""
    return Path(path).read_text(encoding="utf-8")


@server.tool()
def delete_file(path: str) -> str:
    """Delete the file at `path`."""
    Path(path).unlink()
    return f"deleted {path}"


if __name__ == "__main__":
    run(server)
