"""A server for what the 2026-07-28 revision adds around tools: a prompt and a resource read that ask the
client (`input_required`) before they answer, lists and reads with cache hints (`ttlMs`), lists that
change, and MCP Apps tools seen only by the model, only by an app, or by both.

A tool `requests` tells how often each method reached the server (every request is counted), so a test
can see what a client served from its cache.

Run: python tests/servers/modern.py [--ttl-ms N] [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import json
import sys
import warnings
from collections import Counter
from typing import Any

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import mcp_types as mcp
from _cli import run
from mcp.server.apps import Apps
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt, UserMessage

warnings.filterwarnings("ignore", message=".*deprecated.*")

TTL_MS = 60_000
if "--ttl-ms" in sys.argv:
    at = sys.argv.index("--ttl-ms")
    TTL_MS = int(sys.argv[at + 1])
    del sys.argv[at : at + 2]

requests: Counter[str] = Counter()


async def count_requests(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    if ctx.request_id is not None:
        requests[ctx.method] += 1
    return await call_next(ctx)


apps = Apps()

APP_HTML = "<!doctype html><title>dashboard</title><p>dashboard</p>"
apps.add_html_resource("ui://dashboard/app.html", APP_HTML)


@apps.tool(resource_uri="ui://dashboard/app.html", visibility=["model", "app"])
def show_dashboard() -> str:
    """Show the dashboard (for the model and the app)."""
    return "dashboard shown"


@apps.tool(resource_uri="ui://dashboard/app.html", visibility=["app"])
def refresh_dashboard() -> str:
    """Refresh the dashboard's data (only the app calls this)."""
    return "dashboard refreshed"


@apps.tool(resource_uri="ui://dashboard/app.html", visibility=["model"])
def summarize_dashboard() -> str:
    """Summarize the dashboard (only the model calls this)."""
    return "dashboard summarized"


@apps.tool(resource_uri="ui://dashboard/app.html")
def open_dashboard() -> str:
    """Open the dashboard (no visibility given: model and app)."""
    return "dashboard opened"


hint = CacheHint(ttl_ms=TTL_MS)
server = MCPServer(
    "modern",
    log_level="WARNING",
    extensions=[apps],
    middleware=[count_requests],
    cache_hints={
        "tools/list": hint,
        "prompts/list": hint,
        "resources/list": hint,
        "resources/templates/list": hint,
        "resources/read": hint,
    },
)
note = {"text": "A plain note."}


@server.resource("note://plain", name="plain", mime_type="text/plain")
def plain_note() -> str:
    return note["text"]


_WHO = mcp.ElicitRequest(
    params=mcp.ElicitRequestFormParams(
        message="Who is this for?",
        requested_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    )
)


def _asked_name(ctx: Context) -> str | mcp.InputRequiredResult:
    """The name the client gave, or the question that asks for it (answered on the retry)."""
    answer = (ctx.input_responses or {}).get("who")
    if not isinstance(answer, mcp.ElicitResult):
        return mcp.InputRequiredResult(input_requests={"who": _WHO}, request_state="asked-who")
    if ctx.request_state != "asked-who":
        raise ValueError("the retry did not echo the request state")
    if answer.action != "accept" or not answer.content:
        return f"nobody ({answer.action})"
    return str(answer.content["name"])


@server.prompt(description="A greeting for someone the client is asked about.")
async def greeting(ctx: Context) -> list[UserMessage] | mcp.InputRequiredResult:
    name = _asked_name(ctx)
    if isinstance(name, mcp.InputRequiredResult):
        return name
    return [UserMessage(f"Write a greeting for {name}.")]


@server.resource("letter://{topic}", name="letter", description="A letter; the client is asked whom to.")
async def letter(topic: str, ctx: Context) -> str | mcp.InputRequiredResult:
    name = _asked_name(ctx)
    if isinstance(name, mcp.InputRequiredResult):
        return name
    return f"Dear {name}, about {topic}."


@server.tool()
def requests_seen() -> str:
    """How often each method reached this server, as JSON."""
    return json.dumps(dict(requests))


@server.tool()
async def add_prompt(name: str, ctx: Context) -> str:
    """Add a prompt and tell `subscriptions/listen` streams (and, on 2025-11-25, the client) the list changed."""
    server.add_prompt(Prompt.from_function(lambda: f"The {name} prompt.", name=name, description=name))
    await ctx.notify_prompts_changed()  # to listen streams (2026-07-28)
    await ctx.session.send_prompt_list_changed()  # unasked (2025-11-25)
    return f"added prompt {name}"


@server.tool()
async def edit_note(text: str, ctx: Context) -> str:
    """Change note://plain and tell whoever follows it."""
    note["text"] = text
    await ctx.notify_resource_updated("note://plain")  # to listen streams (2026-07-28)
    await ctx.session.send_resource_updated("note://plain")  # to subscribers (2025-11-25)
    return "edited"


if __name__ == "__main__":
    run(server)
