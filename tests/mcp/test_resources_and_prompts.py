"""A server's resources and prompts through `connection.content`: listings over every page, reads of
text and blobs, completion, subscriptions, and listings refreshed when the server says they changed."""

from __future__ import annotations

import base64
from collections.abc import Callable

import anyio
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.errors import ServerError
from toolbridge.mcp import ServerConnection, ServerPool
from toolbridge.types import AssistantMessage, ResourcePart, UserMessage

pytestmark = pytest.mark.anyio

StdioServer = Callable[..., ServerConfig]


async def test_resources_are_listed_over_every_page_and_read_as_text_or_blob(
    stdio_server: StdioServer,
) -> None:
    async with ServerConnection(stdio_server("library")) as library:
        resources = await library.content.list_resources()
        templates = await library.content.list_resource_templates()
        note = await library.content.read_resource("note://readme")
        image = await library.content.read_resource("image://dot.png")
        from_template = await library.content.read_resource("note://todo")

    # The server sends two per page: four resources take two pages.
    assert [r.uri for r in resources] == [
        "note://readme",
        "note://todo",
        "image://dot.png",
        "data://table.bin",
    ]
    assert resources[2].mime_type == "image/png"
    assert resources[0].server == "library"
    assert [(t.uri_template, t.name) for t in templates] == [
        ("note://{name}", "note"),
        ("shelf://{book}", "book"),
    ]
    assert note == [ResourcePart(uri="note://readme", mime_type="text/plain", text="Read me first.")]
    assert image[0].mime_type == "image/png"
    assert image[0].text is None
    assert base64.b64decode(image[0].blob or "").startswith(b"\x89PNG")
    assert from_template[0].text == "Buy milk."


async def test_reading_an_unknown_resource_names_the_server_and_the_uri(stdio_server: StdioServer) -> None:
    async with ServerConnection(stdio_server("library")) as library:
        with pytest.raises(ServerError) as raised:
            await library.content.read_resource("nothing://here")
    assert "'library'" in str(raised.value)
    assert "'nothing://here'" in str(raised.value)


async def test_prompts_are_listed_with_arguments_and_got_as_messages(stdio_server: StdioServer) -> None:
    async with ServerConnection(stdio_server("library")) as library:
        prompts = {p.name: p for p in await library.content.list_prompts()}
        review = await library.content.get_prompt("review", {"code": "x = 1", "language": "rust"})
        discuss = await library.content.get_prompt("discuss", {"name": "readme"})
        greet = await library.content.get_prompt("greet")

    assert [(a.name, a.required) for a in prompts["review"].arguments] == [
        ("code", True),
        ("language", False),
    ]
    assert prompts["review"].description == "Review a piece of code."
    assert review.messages == [UserMessage(content="Review this rust code:\nx = 1")]
    # The text and the resource it embeds become one user message with an attachment.
    assert discuss.messages == [
        UserMessage(
            content="Let us discuss this note.",
            attachments=[ResourcePart(uri="note://readme", mime_type="text/plain", text="Read me first.")],
        )
    ]
    assert greet.messages == [UserMessage(content="Hello!"), AssistantMessage(content="Hi, how can I help?")]


async def test_template_and_prompt_arguments_complete(stdio_server: StdioServer) -> None:
    async with ServerConnection(stdio_server("library")) as library:
        names = await library.content.complete_template_argument("note://{name}", "name", "re")
        books = await library.content.complete_template_argument("shelf://{book}", "book", "")
        languages = await library.content.complete_prompt_argument("review", "language", "r")
    assert names == ["readme"]
    assert books == ["dune", "emma"]
    assert languages == ["rust"]


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])  # a listen stream, or notifications unasked
async def test_listings_are_refreshed_when_the_server_says_they_changed(
    stdio_server: StdioServer, protocol: str
) -> None:
    async with ServerConnection(stdio_server("library", protocol=protocol)) as library:
        before = await library.content.list_resources()
        prompts_before = await library.content.list_prompts()
        await library.call_tool("add_note", {"name": "later", "text": "Added later."}, call_id="a")
        await library.call_tool("add_prompt", {"name": "fresh"}, call_id="b")
        # The notifications come before the tool results, so the next listing asks the server again.
        after = await library.content.list_resources()
        prompts_after = await library.content.list_prompts()

    assert "note://later" not in [r.uri for r in before]
    assert "note://later" in [r.uri for r in after]
    assert "fresh" not in [p.name for p in prompts_before]
    assert "fresh" in [p.name for p in prompts_after]


async def test_a_server_without_resources_or_prompts_lists_none(stdio_server: StdioServer) -> None:
    async with ServerConnection(stdio_server("basic", protocol="2025-11-25")) as basic:
        assert await basic.content.list_resources() == []
        assert await basic.content.list_prompts() == []
        with pytest.raises(ServerError, match="does not offer resource subscriptions"):
            await basic.content.subscribe("note://x", _ignore)


async def _ignore(server: str, uri: str) -> None:
    pass


@pytest.mark.published
async def test_server_everything_lists_reads_completes_and_sends_updates_to_a_subscriber(
    published_server: Callable[..., ServerConfig],
) -> None:
    updates: list[tuple[str, str]] = []
    updated = anyio.Event()

    async def on_update(server: str, uri: str) -> None:
        updates.append((server, uri))
        updated.set()

    async with ServerPool({"everything": published_server("server-everything")}) as pool:
        content = pool.connection("everything").content
        resources = await content.list_resources()
        templates = {t.uri_template for t in await content.list_resource_templates()}
        text = await content.read_resource("demo://resource/dynamic/text/1")
        blob = await content.read_resource("demo://resource/dynamic/blob/2")
        ids = await content.complete_template_argument(
            "demo://resource/dynamic/text/{resourceId}", "resourceId", "7"
        )
        prompts = {p.name: p for p in await content.list_prompts()}
        departments = await content.complete_prompt_argument("completable-prompt", "department", "E")
        people = await content.complete_prompt_argument(
            "completable-prompt", "name", "", context={"department": "Sales"}
        )
        got = await content.get_prompt("args-prompt", {"city": "Oslo"})
        uri = resources[0].uri
        await content.subscribe(uri, on_update)
        await pool.call_tool("everything", "toggle-subscriber-updates", {}, call_id="t")
        with anyio.fail_after(10):
            await updated.wait()
        await content.unsubscribe(uri)

    assert resources
    assert all(r.server == "everything" for r in resources)
    assert "demo://resource/dynamic/text/{resourceId}" in templates
    assert "Resource 1" in (text[0].text or "")
    assert b"Resource 2" in base64.b64decode(blob[0].blob or "")
    assert ids == ["7"]
    assert [a.name for a in prompts["args-prompt"].arguments] == ["city", "state"]
    assert departments == ["Engineering"]
    assert people == ["David", "Eve", "Frank"]
    assert got.messages == [UserMessage(content="What's weather in Oslo?")]
    assert updates[0] == ("everything", uri)


@pytest.mark.slow
async def test_subscriptions_are_renewed_after_the_server_restarts_and_a_failing_handler_harms_nothing(
    stdio_server: StdioServer,
) -> None:
    updates: list[str] = []
    arrived = [anyio.Event(), anyio.Event()]

    async def on_update(server: str, uri: str) -> None:
        updates.append(uri)
        arrived[len(updates) - 1].set()

    async def broken(server: str, uri: str) -> None:
        raise RuntimeError("a bug in the handler")

    # Subscriptions are those of the 2025-11-25 revision (resources/subscribe).
    async with ServerConnection(stdio_server("library", protocol="2025-11-25")) as library:
        await library.content.subscribe("note://readme", on_update)
        await library.content.subscribe("note://readme", broken)
        first = await library.call_tool("touch", {"uri": "note://readme"}, call_id="t1")
        with anyio.fail_after(10):
            await arrived[0].wait()
        crashed = await library.call_tool("crash", {}, call_id="c")
        # The next use starts a new server process, which knows the subscription only if it was renewed.
        second = await library.call_tool("touch", {"uri": "note://readme"}, call_id="t2")
        with anyio.fail_after(10):
            await arrived[1].wait()

    assert first.text == "touched note://readme"
    assert crashed.is_error
    assert second.text == "touched note://readme"
    assert updates == ["note://readme", "note://readme"]
