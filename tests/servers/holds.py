"""A call that runs until it is cancelled, and questions a test can wait on: has it started, was it
cancelled. For tests that hang up mid-call and check the server saw the cancellation.

Run: python tests/servers/holds.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import MCPServer

READ_ONLY = mcp.ToolAnnotations(read_only_hint=True)

server = MCPServer("holds", log_level="WARNING")
started: dict[str, anyio.Event] = {}
released: dict[str, anyio.Event] = {}


@server.tool(annotations=READ_ONLY)
async def hold(tag: str) -> str:
    """Run until cancelled (a minute at most)."""
    started.setdefault(tag, anyio.Event()).set()
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        released.setdefault(tag, anyio.Event()).set()
        raise
    return "never cancelled"


async def _within(event: anyio.Event, wait_ms: int) -> bool:
    with anyio.move_on_after(wait_ms / 1000):
        await event.wait()
    return event.is_set()


@server.tool(annotations=READ_ONLY)
async def has_started(tag: str, wait_ms: int = 10_000) -> bool:
    """Whether a `hold` call with this tag is running, waiting up to `wait_ms` for it to start."""
    return await _within(started.setdefault(tag, anyio.Event()), wait_ms)


@server.tool(annotations=READ_ONLY)
async def was_cancelled(tag: str, wait_ms: int = 10_000) -> bool:
    """Whether a `hold` call with this tag was cancelled, waiting up to `wait_ms` for it."""
    return await _within(released.setdefault(tag, anyio.Event()), wait_ms)


if __name__ == "__main__":
    run(server)
