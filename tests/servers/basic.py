"""The main test server: one tool per behaviour the connection layer must handle.

Run: python tests/servers/basic.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

READ_ONLY = mcp.ToolAnnotations(read_only_hint=True)
IDEMPOTENT = mcp.ToolAnnotations(idempotent_hint=True)
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

server = MCPServer("basic", log_level="WARNING")
cancelled: dict[str, anyio.Event] = {}
arrived: list[str] = []
all_arrived = anyio.Event()


def _cancel_event(tag: str) -> anyio.Event:
    return cancelled.setdefault(tag, anyio.Event())


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=READ_ONLY)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
async def sleep(ms: int, tag: str = "") -> str:
    """Sleep for `ms` milliseconds; a cancellation received meanwhile is recorded under `tag`."""
    try:
        await anyio.sleep(ms / 1000)
    except anyio.get_cancelled_exc_class():
        _cancel_event(tag).set()
        raise
    return f"slept {ms} ms"


@server.tool()
async def rendezvous(tag: str, peers: int = 2, wait_ms: int = 5000) -> str:
    """Wait (up to `wait_ms`) until `peers` rendezvous calls are running; say whether they all met.

    Calls sent one after the other never meet: the first gives up before the second arrives.
    """
    arrived.append(tag)
    if len(arrived) >= peers:
        all_arrived.set()
    with anyio.move_on_after(wait_ms / 1000):
        await all_arrived.wait()
    return f"{tag} met its peers" if all_arrived.is_set() else f"{tag} waited alone"


@server.tool(annotations=READ_ONLY)
async def was_cancelled(tag: str, wait_ms: int = 5000) -> bool:
    """Whether a `sleep` call with this tag was cancelled, waiting up to `wait_ms` for it to happen."""
    with anyio.move_on_after(wait_ms / 1000):
        await _cancel_event(tag).wait()
    return _cancel_event(tag).is_set()


@server.tool(annotations=READ_ONLY)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def crash(code: int = 1) -> str:
    """Exit the server process in the middle of this call."""
    print(f"crashing on purpose with code {code}", file=sys.stderr, flush=True)
    os._exit(code)


def _run_or_crash_first_time(marker: str) -> str:
    """Count runs in the `marker` file; the first run kills the process before it answers."""
    path = Path(marker)
    runs = len(path.read_text().splitlines()) + 1 if path.exists() else 1
    with path.open("a") as file:
        file.write("run\n")
    if runs == 1:
        os._exit(1)
    return f"run {runs}"


@server.tool(annotations=READ_ONLY)
def flaky_read(marker: str) -> str:
    """Read-only tool whose first call crashes the server."""
    return _run_or_crash_first_time(marker)


@server.tool(annotations=IDEMPOTENT)
def flaky_idempotent(marker: str) -> str:
    """Idempotent tool whose first call crashes the server."""
    return _run_or_crash_first_time(marker)


@server.tool()
def flaky_write(marker: str) -> str:
    """Tool with no safety hints whose first call crashes the server."""
    return _run_or_crash_first_time(marker)


@server.tool(annotations=READ_ONLY)
def media() -> mcp.CallToolResult:
    """One of every content type, plus structured content."""
    return mcp.CallToolResult(
        content=[
            mcp.TextContent(type="text", text="all kinds"),
            mcp.ImageContent(type="image", data=PNG_1X1, mime_type="image/png"),
            mcp.AudioContent(
                type="audio", data=base64.b64encode(b"RIFF....").decode(), mime_type="audio/wav"
            ),
            mcp.EmbeddedResource(
                type="resource",
                resource=mcp.TextResourceContents(
                    uri="file:///notes.txt", mime_type="text/plain", text="notes"
                ),
            ),
            mcp.EmbeddedResource(
                type="resource",
                resource=mcp.BlobResourceContents(
                    uri="file:///data.bin", mime_type="application/octet-stream", blob="AAEC"
                ),
            ),
            mcp.ResourceLink(
                type="resource_link", name="readme", uri="file:///README.md", mime_type="text/markdown"
            ),
        ],
        structured_content={"kinds": 6},
    )


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool(annotations=READ_ONLY)
def weather(city: str) -> Weather:
    """Structured output with an output schema."""
    return Weather(city=city, celsius=21.5)


@server.tool()
def fail(message: str) -> str:
    """Always fails with `message` (an isError result)."""
    raise ToolError(message)


@server.tool()
async def add_tool(name: str, ctx: Context) -> str:
    """Register a new echo-like tool called `name` and tell the client the tool list changed."""
    server.add_tool(lambda text: text, name=name, description=f"added at run time: {name}")
    # Related to this request, so it travels on this call's own stream on every transport.
    await ctx.session.send_notification(mcp.ToolListChangedNotification(), related_request_id=ctx.request_id)
    return f"added {name}"


@server.tool(annotations=READ_ONLY)
def write_stderr(text: str) -> str:
    """Write a line to the server's stderr."""
    print(text, file=sys.stderr, flush=True)
    return "written"


if __name__ == "__main__":
    run(server)
