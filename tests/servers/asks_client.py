"""A server whose tools ask their client: for a completion (sampling), the user (elicitation), its
roots, and that send it log messages.

Its tools ask with requests of their own, mid-call, which only the 2025-11-25 revision allows, so over
stdio it serves that revision alone, as servers written before 2026-07-28 do, and clients fall back to
the handshake (tests/servers/revisions.py asks the same questions on either revision).

Run: python tests/servers/asks_client.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

server = MCPServer("asks-client", log_level="WARNING")
warnings.filterwarnings("ignore", message=".*deprecated.*")


class Contact(BaseModel):
    name: str
    age: int = 30


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model for a one-line summary of `text`."""
    result = await ctx.session.create_message(
        [mcp.SamplingMessage(role="user", content=mcp.TextContent(type="text", text=text))],
        max_tokens=64,
        system_prompt="Summarize in one line.",
    )
    content = result.content
    return content.text if isinstance(content, mcp.TextContent) else repr(content)


@server.tool()
async def ask_contact(ctx: Context) -> str:
    """Ask the user for a contact."""
    answer = await ctx.elicit("Who should we contact?", Contact)
    if answer.action == "accept":
        return f"accepted {answer.data.name} ({answer.data.age})"
    return answer.action


@server.tool()
async def show_roots(ctx: Context) -> str:
    """The client's roots, one URI per line."""
    listed = await ctx.session.list_roots()
    return "\n".join(str(root.uri) for root in listed.roots) or "(no roots)"


@server.tool()
async def shout(text: str, ctx: Context) -> str:
    """Send `text` to the client as a warning log message, then return it."""
    await ctx.warning(text, logger_name="shouter")
    return text


@server.tool()
async def sample_raw(request: str, ctx: Context) -> str:
    """Send `request` (createMessage params as JSON: messages as [role, text] pairs, the rest as in
    the SDK) and return the client's whole result as JSON."""
    given: dict[str, Any] = json.loads(request)
    messages = [
        mcp.SamplingMessage(role=role, content=mcp.TextContent(type="text", text=text))
        for role, text in given.pop("messages")
    ]
    if "tools" in given:
        given["tools"] = [mcp.Tool.model_validate(tool) for tool in given["tools"]]
    if "model_preferences" in given:
        given["model_preferences"] = mcp.ModelPreferences.model_validate(given["model_preferences"])
    result = await ctx.session.create_message(messages, **given)
    return result.model_dump_json(by_alias=True, exclude_none=True)


# A 1x1 PNG and a few bytes standing for a WAV clip, base64-encoded as MCP carries them.
DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
CLIP_WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEA"


@server.tool()
async def describe_media(ctx: Context, offer_lookup: bool = False) -> str:
    """Ask the client's model what a picture and a sound clip hold (one user message: text, image,
    audio), offering it a `lookup` tool it must call when `offer_lookup`; returns the client's whole result as JSON."""
    content: list[mcp.SamplingMessageContentBlock] = [
        mcp.TextContent(type="text", text="What do these show?"),
        mcp.ImageContent(type="image", data=DOT_PNG, mime_type="image/png"),
        mcp.AudioContent(type="audio", data=CLIP_WAV, mime_type="audio/wav"),
    ]
    lookup = mcp.Tool(name="lookup", input_schema={"type": "object", "properties": {"q": {"type": "string"}}})
    result = await ctx.session.create_message(
        [mcp.SamplingMessage(role="user", content=content)],
        max_tokens=64,
        tools=[lookup] if offer_lookup else None,
        tool_choice=mcp.ToolChoice(mode="required") if offer_lookup else None,
    )
    return result.model_dump_json(by_alias=True, exclude_none=True)


PREFERENCES = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "title": "City", "description": "Where you live"},
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 10, "default": 2},
        "vegetarian": {"type": "boolean", "title": "Vegetarian", "default": False},
        "meal": {"type": "string", "title": "Meal", "enum": ["lunch", "dinner"], "default": "dinner"},
    },
    "required": ["city"],
}


@server.tool()
async def ask_preferences(ctx: Context) -> str:
    """Ask the user a form of every field kind; returns the action and the content as JSON."""
    answer = await ctx.session.elicit_form("Booking details?", PREFERENCES)
    return json.dumps({"action": answer.action, "content": answer.content}, sort_keys=True)


@server.tool()
async def ask_to_open(url: str, ctx: Context) -> str:
    """Ask the user to open `url` (URL mode); when accepted, say it completed (as a server would once
    the browser step is done)."""
    answer = await ctx.session.elicit_url("Sign in to continue.", url, "elicit-1")
    if answer.action == "accept":
        await ctx.session.send_elicit_complete("elicit-1")
    return answer.action


roots_changed = anyio.Event()
roots_after_change: list[str] = []


async def _on_roots_changed(ctx: Any, params: mcp.NotificationParams) -> None:
    global roots_changed
    listed = await ctx.session.list_roots()
    roots_after_change[:] = [str(root.uri) for root in listed.roots]
    roots_changed.set()


server._lowlevel_server.add_notification_handler(
    "notifications/roots/list_changed", mcp.NotificationParams, _on_roots_changed
)


@server.tool()
async def await_roots_change() -> str:
    """Wait (up to 10 s) for the client to say its roots changed; the roots it then lists, one a line."""
    global roots_changed
    with anyio.fail_after(10):
        await roots_changed.wait()
    roots_changed = anyio.Event()
    return "\n".join(roots_after_change)


if __name__ == "__main__":
    run(server, handshake_only=True)
