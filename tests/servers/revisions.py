"""A server for the protocol-revision tests: tools that ask their client (sampling, elicitation, roots)
in a way that works on either revision, a tool that asks mid-call the 2025-11-25 way, and one that
announces new tools only on `subscriptions/listen` streams, the 2026-07-28 way.
With --mute-listen it accepts `subscriptions/listen` but never acknowledges the stream.

Run: python tests/servers/revisions.py [--mute-listen] [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import mcp_types as mcp
from _cli import run
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from pydantic import BaseModel

server = MCPServer("revisions", log_level="WARNING")
warnings.filterwarnings("ignore", message=".*deprecated.*")


class Contact(BaseModel):
    name: str
    age: int = 30


def _summary_request(text: str) -> Sample:
    message = mcp.SamplingMessage(role="user", content=mcp.TextContent(type="text", text=text))
    return Sample([message], max_tokens=64, system_prompt="Summarize in one line.")


def _contact_request() -> Elicit[Contact]:
    return Elicit("Who should we contact?", Contact)


def _roots_request() -> ListRoots:
    return ListRoots()


# The questions are `Resolve` markers, which the SDK asks the way the client's revision wants them: a
# request mid-call on 2025-11-25, an input-required result that the client answers and resends on
# 2026-07-28 (where a server cannot send requests of its own).
@server.tool()
async def summarize(text: str, summary: Annotated[mcp.CreateMessageResult, Resolve(_summary_request)]) -> str:
    """Ask the client's model for a one-line summary of `text`."""
    content = summary.content
    return content.text if isinstance(content, mcp.TextContent) else repr(content)


@server.tool()
async def ask_contact(answer: Annotated[ElicitationResult[Contact], Resolve(_contact_request)]) -> str:
    """Ask the user for a contact."""
    if isinstance(answer, AcceptedElicitation):
        return f"accepted {answer.data.name} ({answer.data.age})"
    return answer.action


@server.tool()
async def show_roots(listed: Annotated[mcp.ListRootsResult, Resolve(_roots_request)]) -> str:
    """The client's roots, one URI per line."""
    return "\n".join(str(root.uri) for root in listed.roots) or "(no roots)"


@server.tool()
async def roots_mid_call(ctx: Context) -> str:
    """Ask the client for its roots with a request of the server's own (the 2025-11-25 way)."""
    listed = await ctx.session.list_roots()
    return "\n".join(str(root.uri) for root in listed.roots) or "(no roots)"


@server.tool()
async def add_tool_quietly(name: str, ctx: Context) -> str:
    """Register a tool called `name` and announce it on `subscriptions/listen` streams alone."""
    server.add_tool(lambda text: text, name=name, description=f"added at run time: {name}")
    await ctx.notify_tools_changed()
    return f"added {name}"


async def never_acknowledge(_context: object, _params: mcp.SubscriptionsListenRequestParams) -> None:
    await anyio.sleep_forever()


if __name__ == "__main__":
    if "--mute-listen" in sys.argv:
        sys.argv.remove("--mute-listen")
        lowlevel = server._lowlevel_server
        lowlevel.add_request_handler(
            "subscriptions/listen", mcp.SubscriptionsListenRequestParams, never_acknowledge
        )
    run(server)
