"""A server for what a gateway must pass through: a destructive tool, a long job that reports progress
and notices being cancelled, and log messages at a level the call names.

Run: python tests/servers/chores.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import warnings
from pathlib import Path

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import Context, MCPServer

warnings.filterwarnings("ignore", message=".*deprecated.*")
server = MCPServer("chores", log_level="WARNING")
cancelled: dict[str, anyio.Event] = {}


def _cancel_event(tag: str) -> anyio.Event:
    return cancelled.setdefault(tag, anyio.Event())


@server.tool(annotations=mcp.ToolAnnotations(destructive_hint=True))
def wipe(path: str) -> str:
    """Delete the file at `path` (the file surviving shows the call did not run)."""
    Path(path).unlink()
    return f"wiped {path}"


@server.tool(annotations=mcp.ToolAnnotations(read_only_hint=True))
def peek(path: str) -> str:
    """Whether the file at `path` exists."""
    return "exists" if Path(path).exists() else "missing"


@server.tool()
async def long_job(tag: str, ctx: Context) -> str:
    """Report "started" as progress, then wait (up to 60 s); a cancellation meanwhile is recorded under `tag`."""
    await ctx.report_progress(1, 3, "started")
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        _cancel_event(tag).set()
        raise
    return "finished"


@server.tool(annotations=mcp.ToolAnnotations(read_only_hint=True))
async def was_cancelled(tag: str, wait_ms: int = 5000) -> bool:
    """Whether a `long_job` with this tag was cancelled, waiting up to `wait_ms` for it to happen."""
    with anyio.move_on_after(wait_ms / 1000):
        await _cancel_event(tag).wait()
    return _cancel_event(tag).is_set()


@server.tool()
async def chatter(text: str, ctx: Context) -> str:
    """Log `text` once at each of debug, info and error (logger "chores"), then return it."""
    for level in ("debug", "info", "error"):
        await ctx.log(level, f"{level}: {text}", logger_name="chores")  # type: ignore[arg-type]
    return text


if __name__ == "__main__":
    run(server)
