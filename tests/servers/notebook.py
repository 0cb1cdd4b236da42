"""Notes kept in memory: reads annotated read-only, writes not, to test the result cache against writes.

`hold_reads` makes the next read take its value, then wait until `release_reads` is called, and makes
the next write wait until that read has its value: a read that overlaps a write, in a known order.

Run: python tests/servers/notebook.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import MCPServer

READ_ONLY = mcp.ToolAnnotations(read_only_hint=True)
WAIT_LIMIT = 10  # seconds: a test that goes wrong fails instead of hanging

server = MCPServer("notebook", log_level="WARNING")
notes: dict[str, str] = {}
reads: dict[str, int] = {}


class _HeldRead:
    def __init__(self) -> None:
        self.has_value = anyio.Event()
        self.released = anyio.Event()


held: list[_HeldRead] = []


@server.tool(annotations=READ_ONLY)
async def read_note(name: str) -> str:
    """The note called `name`, and how many times it has really been read."""
    text = notes.get(name, "(empty)")
    reads[name] = reads.get(name, 0) + 1
    count = reads[name]
    if held:
        hold = held[0]
        hold.has_value.set()
        with anyio.move_on_after(WAIT_LIMIT):
            await hold.released.wait()
    return f"{name}: {text} (read {count})"


@server.tool()
async def write_note(name: str, text: str) -> str:
    """Replace the note called `name` (after a held read has taken its value)."""
    if held:
        with anyio.move_on_after(WAIT_LIMIT):
            await held[0].has_value.wait()
    notes[name] = text
    return f"wrote {name}"


@server.tool(annotations=READ_ONLY)
def hold_reads() -> str:
    """Hold the next read until `release_reads`, and the next write until that read has its value."""
    held.append(_HeldRead())
    return "holding"


@server.tool(annotations=READ_ONLY)
def release_reads() -> str:
    """Let the held read answer (with the value it took before the write)."""
    held.pop(0).released.set()
    return "released"


if __name__ == "__main__":
    run(server)
