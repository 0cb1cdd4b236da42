"""A server whose tools ask their client: for a completion (sampling), the user (elicitation), its
roots, and that send it log messages.

Run: python tests/servers/asks_client.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import warnings

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


if __name__ == "__main__":
    run(server)
