"""A server that reports: progress on long calls, log messages at the level its client sets, and
structured output (right and wrong).

Run: python tests/servers/reports.py [--both-revisions] [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated, Any

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

warnings.filterwarnings("ignore", message=".*deprecated.*")
server = MCPServer("reports", log_level="WARNING")
_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
level_set: list[str] = []


async def _set_level(context: Any, params: mcp.SetLevelRequestParams) -> mcp.EmptyResult:
    level_set.append(params.level)
    await context.session.send_log_message(
        level="notice", data=f"log level set to {params.level}", logger="setup"
    )
    return mcp.EmptyResult()


# MCPServer has no setLevel of its own; registering the handler also declares the logging capability.
server._lowlevel_server.add_request_handler("logging/setLevel", mcp.SetLevelRequestParams, _set_level)


@server.tool()
async def crunch(steps: int, step_ms: int, ctx: Context) -> str:
    """Work for `steps` steps of `step_ms` each, reporting progress after each ("step i of n")."""
    for step in range(1, steps + 1):
        await anyio.sleep(step_ms / 1000)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"crunched {steps} steps"


@server.tool()
async def hold(until_file: str, wait_ms: int = 30_000, ctx: Context | None = None) -> str:
    """Report being halfway, then wait (up to `wait_ms`) until the file `until_file` exists."""
    assert ctx is not None
    await ctx.report_progress(1, 2, "halfway")
    with anyio.move_on_after(wait_ms / 1000):
        # The test creates the file from another process, so there is no event to wait on.
        while not await anyio.Path(until_file).exists():  # noqa: ASYNC110
            await anyio.sleep(0.02)
    await ctx.report_progress(2, 2, "done")
    return "released"


@server.tool()
async def say(level: str, text: str, ctx: Context) -> str:
    """Log `text` at `level` unless the client asked for a higher level; return the level in force."""
    threshold = level_set[-1] if level_set else "debug"
    if _LEVELS.index(level) >= _LEVELS.index(threshold):
        await ctx.log(level, text, logger_name="reporter")  # type: ignore[arg-type]
    return threshold


@server.tool()
async def chatter(count: int, size: int, ctx: Context) -> str:
    """Log `count` warnings of `size` characters each, as fast as it can (a flood)."""
    for n in range(count):
        await ctx.log("warning", f"{n} " + "x" * size, logger_name="flood")
    return f"logged {count}"


class Weather(BaseModel):
    city: str
    celsius: float


@server.tool()
def trace_context(ctx: Context) -> str:
    """The W3C `traceparent` the call's `_meta` carried (empty when none)."""
    meta = ctx.request_context.meta or {}
    return str(meta.get("traceparent", ""))


@server.tool()
def weather(city: str) -> Weather:
    """The weather in `city`, as structured output."""
    return Weather(city=city, celsius=21.5)


@server.tool()
def broken_weather(city: str) -> Annotated[mcp.CallToolResult, Weather]:
    """The weather in `city`, with structured output that breaks its own schema."""
    wrong = {"city": city, "celsius": "warm"}
    return mcp.CallToolResult(
        content=[mcp.TextContent(type="text", text=str(wrong))], structured_content=wrong
    )


@server.tool()
def weather_data(city: str) -> Annotated[mcp.CallToolResult, Weather]:
    """The weather in `city`, as structured output alone (no text)."""
    return mcp.CallToolResult(content=[], structured_content={"city": city, "celsius": 3.5})


_listing = server._lowlevel_server.get_request_handler("tools/list")
assert _listing is not None


async def _list_tools_saying_so(context: Any, params: Any) -> Any:
    # On 2026-07-28 a server logs only while it answers a request (at the level the request carries).
    await context.session.send_log_message(
        level="info", data="listing tools", logger="setup", related_request_id=context.request_id
    )
    return await _listing.handler(context, params)


# The SDK's server checks its own output; this one is meant to send what it says.
server._tool_manager._tools["broken_weather"].fn_metadata.output_model = None


if __name__ == "__main__":
    # Over stdio, the 2025-11-25 revision alone (logging/setLevel) unless --both-revisions; on 2026-07-28
    # the client's level comes in each request's _meta.
    both = "--both-revisions" in sys.argv
    if both:
        sys.argv.remove("--both-revisions")
        server._lowlevel_server.add_request_handler("tools/list", _listing.params_type, _list_tools_saying_so)
    run(server, handshake_only=not both)
