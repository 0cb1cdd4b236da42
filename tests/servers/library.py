"""A server with resources and prompts for what server-everything lacks: listings over several pages,
images and binary blobs, a template whose argument completes, lists that change while connected, and
subscriptions that a restarted server forgets (on either revision).

Run: python tests/servers/library.py [--transport stdio|http|sse] [--port N]
"""

from __future__ import annotations

import base64
import os
import warnings

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import mcp_types as mcp
from _cli import run
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, Prompt, UserMessage
from mcp.server.mcpserver.resources.types import BinaryResource, TextResource

warnings.filterwarnings("ignore", message=".*deprecated.*")

# A 1x1 PNG.
DOT_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PAGE_SIZE = 2

server = MCPServer("library", log_level="WARNING")
notes: dict[str, str] = {"readme": "Read me first.", "todo": "Buy milk."}

for name, text in notes.items():
    server.add_resource(TextResource(uri=f"note://{name}", name=name, text=text, mime_type="text/plain"))
server.add_resource(
    BinaryResource(uri="image://dot.png", name="dot.png", data=DOT_PNG, mime_type="image/png")
)
server.add_resource(
    BinaryResource(
        uri="data://table.bin", name="table.bin", data=bytes(range(10)), mime_type="application/octet-stream"
    )
)


@server.resource("note://{name}", name="note", description="A note by name.", mime_type="text/plain")
def note(name: str) -> str:
    return notes.get(name, f"No note named {name}.")


@server.resource("shelf://{book}", name="book", description="A book on the shelf.", mime_type="text/plain")
def book(book: str) -> str:
    return f"The book {book}."


@server.completion()
async def complete(
    ref: mcp.PromptReference | mcp.ResourceTemplateReference,
    argument: mcp.CompletionArgument,
    context: mcp.CompletionContext | None,
) -> mcp.Completion | None:
    if argument.name == "name":
        return mcp.Completion(values=sorted(n for n in notes if n.startswith(argument.value)))
    if argument.name == "book":
        return mcp.Completion(values=[b for b in ("dune", "emma") if b.startswith(argument.value)])
    if argument.name == "language":
        return mcp.Completion(values=[lang for lang in ("python", "rust") if lang.startswith(argument.value)])
    return None


@server.prompt(description="Review a piece of code.")
def review(code: str, language: str = "python") -> list[UserMessage]:
    return [UserMessage(f"Review this {language} code:\n{code}")]


@server.prompt(description="Start with a note attached.")
def discuss(name: str) -> list[UserMessage | AssistantMessage]:
    resource = mcp.EmbeddedResource(
        type="resource",
        resource=mcp.TextResourceContents(
            uri=f"note://{name}", mime_type="text/plain", text=notes.get(name, "")
        ),
    )
    return [
        UserMessage("Let us discuss this note."),
        UserMessage(resource),
    ]


@server.prompt(description="A greeting exchange.")
def greet() -> list[UserMessage | AssistantMessage]:
    return [UserMessage("Hello!"), AssistantMessage("Hi, how can I help?")]


@server.prompt(description="Pick up an earlier exchange.")
def followup() -> list[UserMessage | AssistantMessage]:
    return [UserMessage("Earlier question"), AssistantMessage("Earlier answer"), UserMessage("And now?")]


@server.tool()
async def add_note(name: str, text: str, ctx: Context) -> str:
    """Add a note resource; the client is told the resource list changed."""
    notes[name] = text
    server.add_resource(TextResource(uri=f"note://{name}", name=name, text=text, mime_type="text/plain"))
    await ctx.notify_resources_changed()  # to listen streams (2026-07-28)
    await ctx.session.send_resource_list_changed()  # unasked (2025-11-25)
    return f"added note://{name}"


@server.tool()
async def add_prompt(name: str, ctx: Context) -> str:
    """Add a prompt; the client is told the prompt list changed."""

    def made() -> str:
        return f"This is the {name} prompt."

    server.add_prompt(Prompt.from_function(made, name=name, description=f"The {name} prompt."))
    await ctx.notify_prompts_changed()
    await ctx.session.send_prompt_list_changed()
    return f"added prompt {name}"


subscribed: set[str] = set()


async def subscribe(ctx: object, params: mcp.SubscribeRequestParams) -> mcp.EmptyResult:
    subscribed.add(str(params.uri))
    return mcp.EmptyResult()


@server.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Say that a resource changed: to `subscriptions/listen` streams that name it (2026-07-28), and
    to the client if it subscribed with `resources/subscribe` in this process (2025-11-25)."""
    await ctx.notify_resource_updated(uri)
    if uri not in subscribed:
        return f"told the listen streams about {uri}"
    await ctx.session.send_resource_updated(uri)
    return f"touched {uri}"


@server.tool()
def crash() -> str:
    """Exit at once, as a crashing server does."""
    os._exit(3)


async def list_resources_in_pages(
    ctx: object, params: mcp.PaginatedRequestParams | None
) -> mcp.ListResourcesResult:
    everything = await server.list_resources()
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE_SIZE
    return mcp.ListResourcesResult(
        resources=everything[start:end], next_cursor=str(end) if end < len(everything) else None
    )


server._lowlevel_server.add_request_handler(
    "resources/list", mcp.PaginatedRequestParams, list_resources_in_pages
)
server._lowlevel_server.add_request_handler("resources/subscribe", mcp.SubscribeRequestParams, subscribe)

if __name__ == "__main__":
    run(server)
