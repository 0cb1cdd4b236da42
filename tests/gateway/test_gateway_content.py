"""Resources, resource templates, prompts and completions through `toolbridge gateway`, driven by the
official SDK client over stdio: listed from every offered server, each request sent to its owner."""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client, MCPError
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from toolbridge.config.agents import ToolFilter
from toolbridge.config.gateway import TokenReach
from toolbridge.config.model import Config
from toolbridge.gateway import Gateway
from toolbridge.tools import Toolbox

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

DOT_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


async def _all_resources(client: Client) -> list[mcp.Resource]:
    resources: list[mcp.Resource] = []
    cursor: str | None = None
    while True:
        page = await client.list_resources(cursor=cursor)
        resources.extend(page.resources)
        if not (cursor := page.next_cursor):
            return resources


def _text(result: mcp.ReadResourceResult) -> str:
    contents = result.contents[0]
    assert isinstance(contents, mcp.TextResourceContents)
    return contents.text


async def test_a_client_lists_reads_gets_and_completes_what_the_servers_offer(tmp_path: Path) -> None:
    servers = {"basic": our_server("basic"), "library": our_server("library")}
    async with Client(gateway(tmp_path, servers)) as client:
        capabilities = client.server_capabilities
        assert capabilities.resources is not None
        assert capabilities.prompts is not None
        assert capabilities.completions is not None

        uris = [resource.uri for resource in await _all_resources(client)]
        assert uris == ["note://readme", "note://todo", "image://dot.png", "data://table.bin"]
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["note://{name}", "shelf://{book}"]

        assert _text(await client.read_resource("note://todo")) == "Buy milk."
        assert _text(await client.read_resource("shelf://dune")) == "The book dune."
        image = (await client.read_resource("image://dot.png")).contents[0]
        assert isinstance(image, mcp.BlobResourceContents)
        assert (image.uri, image.mime_type, image.blob) == ("image://dot.png", "image/png", DOT_PNG)

        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        assert {"review", "discuss", "greet", "followup"} <= set(prompts)
        assert [a.name for a in prompts["review"].arguments or []] == ["code", "language"]
        review = await client.get_prompt("review", {"code": "x = 1", "language": "rust"})
        assert review.messages[0].content == mcp.TextContent(
            type="text", text="Review this rust code:\nx = 1"
        )

        language = await client.complete(
            mcp.PromptReference(type="ref/prompt", name="review"), {"name": "language", "value": "py"}
        )
        assert language.completion.values == ["python"]
        book = await client.complete(
            mcp.ResourceTemplateReference(type="ref/resource", uri="shelf://{book}"),
            {"name": "book", "value": "e"},
        )
        assert book.completion.values == ["emma"]


async def test_uris_and_prompt_names_two_servers_share_are_told_apart_and_routed(tmp_path: Path) -> None:
    servers = {"docs": our_server("library"), "notes": our_server("library")}
    async with Client(gateway(tmp_path, servers, native=False)) as client:
        uris = {resource.uri for resource in await _all_resources(client)}
        assert {"docs+note://readme", "notes+note://readme", "docs+image://dot.png"} <= uris
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {
            "docs+note://{name}",
            "notes+note://{name}",
            "docs+shelf://{book}",
            "notes+shelf://{book}",
        }

        # A note added to `notes` alone: each prefixed URI reaches its own server.
        assert not (
            await client.call_tool("notes__add_note", {"name": "fresh", "text": "Only here."})
        ).is_error
        assert _text(await client.read_resource("notes+note://fresh")) == "Only here."
        assert _text(await client.read_resource("docs+note://fresh")) == "No note named fresh."
        read = await client.read_resource("notes+note://todo")
        assert read.contents[0].uri == "notes+note://todo"

        names = {prompt.name for prompt in (await client.list_prompts()).prompts}
        assert {"docs__review", "notes__review"} <= names
        assert "review" not in names
        discussed = await client.get_prompt("notes__discuss", {"name": "todo"})
        attached = discussed.messages[1].content
        assert isinstance(attached, mcp.EmbeddedResource)
        assert attached.resource.uri == "notes+note://todo"  # a URI the client can read back here

        by_template = await client.complete(
            mcp.ResourceTemplateReference(type="ref/resource", uri="notes+note://{name}"),
            {"name": "name", "value": "fr"},
        )
        assert by_template.completion.values == ["fresh"]
        by_prompt = await client.complete(
            mcp.PromptReference(type="ref/prompt", name="docs__review"), {"name": "language", "value": "r"}
        )
        assert by_prompt.completion.values == ["rust"]


async def test_an_agent_offers_only_its_servers_resources_and_prompts(tmp_path: Path) -> None:
    servers = {"docs": our_server("library"), "notes": our_server("library")}
    agents: dict[str, Any] = {"agents": {"reader": {"servers": ["docs"], "tools": {"deny": ["calculate"]}}}}
    async with Client(gateway(tmp_path, servers, agent="reader", **agents)) as client:
        # Only one server is offered, so nothing collides: the URIs are the server's own.
        assert "note://readme" in {resource.uri for resource in await _all_resources(client)}
        # A tool the agent's rules leave out is refused, saying which rules.
        refused = await client.call_tool("calculate", {"expression": "1 + 1"})
        assert refused.is_error
        assert "'calculate' is not allowed here (the agent 'reader'" in str(refused.content)
        assert "review" in {prompt.name for prompt in (await client.list_prompts()).prompts}
        with pytest.raises(MCPError, match="Server 'docs' failed reading 'notes\\+note://todo'"):
            await client.read_resource("notes+note://todo")  # not a way round the agent's choice


async def test_unknown_uris_and_prompts_are_refused_with_what_to_do(tmp_path: Path) -> None:
    servers = {"basic": our_server("basic"), "library": our_server("library")}
    async with Client(gateway(tmp_path, servers)) as client:
        with pytest.raises(MCPError, match="resources/list"):
            await client.read_resource("nowhere://at-all")
        with pytest.raises(MCPError, match=r"No prompt named 'no_such' .*prompts/list"):
            await client.get_prompt("no_such")
        with pytest.raises(MCPError, match="library"):  # the server's refusal, naming the server
            await client.get_prompt("review", {})


async def test_long_listings_come_in_pages_the_client_follows(stdio_server: Any) -> None:
    config = Config(servers={"library": stdio_server("library")})
    async with Toolbox(config, native=False) as toolbox:
        gateway_server = Gateway(toolbox, page_size=3).server
        async with Client(gateway_server, mode="legacy") as client:
            first = await client.list_resources()
            assert [r.uri for r in first.resources] == ["note://readme", "note://todo", "image://dot.png"]
            assert first.next_cursor is not None
            rest = await client.list_resources(cursor=first.next_cursor)
            assert [r.uri for r in rest.resources] == ["data://table.bin"]
            assert rest.next_cursor is None
            assert len((await client.list_prompts()).prompts) == 3
            with pytest.raises(MCPError, match="list again without a cursor"):
                await client.list_resources(cursor="not-a-cursor")


@contextmanager
def holding_token(name: str) -> Iterator[None]:
    """Requests made in the block come with the named token, as `HttpGuard` hands it to the handlers
    (the in-process server's tasks start in the block, so they see it)."""
    reset = auth_context_var.set(AuthenticatedUser(AccessToken(token="t", client_id=name, scopes=[])))
    try:
        yield
    finally:
        auth_context_var.reset(reset)


async def _refusal(request: Awaitable[object], asked: str) -> str:
    """The error message a request gets, with what it asked for left out (to compare two refusals)."""
    with pytest.raises(MCPError) as refused:
        await request
    return refused.value.error.message.replace(repr(asked), "<asked>")


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
async def test_a_token_reaches_the_resources_prompts_and_completions_of_its_tools_servers_only(
    stdio_server: Any,
) -> None:
    servers = {"docs": stdio_server("library", name="docs"), "notes": stdio_server("library", name="notes")}
    rules = {"reader": TokenReach(tools=ToolFilter(allow=["docs:*"]))}
    async with Toolbox(Config(servers=servers), native=False) as toolbox:
        server = Gateway(toolbox, token_rules=rules).server
        with holding_token("reader"):
            async with Client(server, mode="legacy") as client:
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert tools == {"docs__add_note", "docs__add_prompt", "docs__touch", "docs__crash"}
                uris = {resource.uri for resource in await _all_resources(client)}
                assert uris == {
                    "docs+note://readme",
                    "docs+note://todo",
                    "docs+image://dot.png",
                    "docs+data://table.bin",
                }
                listed = (await client.list_resource_templates()).resource_templates
                assert {template.uri_template for template in listed} == {
                    "docs+note://{name}",
                    "docs+shelf://{book}",
                }
                prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
                assert prompts == {"docs__review", "docs__discuss", "docs__greet", "docs__followup"}
                assert _text(await client.read_resource("docs+note://todo")) == "Buy milk."

                # The other server's resources, prompts and templates are refused as unknown ones.
                unknown = await _refusal(client.read_resource("nowhere+note://todo"), "nowhere+note://todo")
                for uri in ["notes+note://todo", "notes+shelf://dune"]:
                    assert await _refusal(client.read_resource(uri), uri) == unknown
                    assert await _refusal(client.subscribe_resource(uri), uri) == unknown
                unknown = await _refusal(client.get_prompt("no_such"), "no_such")
                assert "notes__" not in unknown  # the prompts it names are the token's own
                denied = await _refusal(client.get_prompt("notes__review", {"code": "x"}), "notes__review")
                assert denied == unknown
                prompt = mcp.PromptReference(type="ref/prompt", name="notes__review")
                language = {"name": "language", "value": "r"}
                assert await _refusal(client.complete(prompt, language), "notes__review") == unknown

                name = {"name": "name", "value": "t"}
                nowhere = mcp.ResourceTemplateReference(type="ref/resource", uri="no+note://{name}")
                unknown = await _refusal(client.complete(nowhere, name), "no+note://{name}")
                template = mcp.ResourceTemplateReference(type="ref/resource", uri="notes+note://{name}")
                assert await _refusal(client.complete(template, name), "notes+note://{name}") == unknown


async def test_a_tokens_servers_decide_its_tools_resources_and_prompts(stdio_server: Any) -> None:
    config = Config(servers={"basic": stdio_server("basic"), "library": stdio_server("library")})
    rules = {"notes": TokenReach(servers=["library"])}
    async with Toolbox(config) as toolbox:
        server = Gateway(toolbox, token_rules=rules).server
        with holding_token("notes"):
            async with Client(server, mode="legacy") as client:
                assert {tool.name for tool in (await client.list_tools()).tools} == {
                    "add_note",
                    "add_prompt",
                    "touch",
                    "library__crash",  # basic has a `crash` too
                }
                refused = await client.call_tool("echo", {"text": "hi"})
                assert refused.is_error
                assert "the token 'notes' may not use it" in str(refused.content)
                assert len(await _all_resources(client)) == 4
                assert len((await client.list_prompts()).prompts) == 4
        with holding_token("anyone-else"):  # a token without a rule reaches everything
            async with Client(server, mode="legacy") as client:
                assert "echo" in {tool.name for tool in (await client.list_tools()).tools}
