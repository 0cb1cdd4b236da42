"""Prompts and resources on the 2026-07-28 revision: a prompt or a read the server answers with questions
(`input_required`) is answered and sent again like a tool call; listings and reads are kept as long as
the server's cache hint (`ttlMs`) says, and a listing no longer once the server says it changed."""

from __future__ import annotations

import json
from collections.abc import Callable

import anyio
import mcp_types as mcp
import pytest

from toolbridge.config.model import Config, ServerConfig
from toolbridge.errors import ServerError
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.tools import Toolbox

pytestmark = pytest.mark.anyio

StdioServer = Callable[..., ServerConfig]


def _answering(name: str, asked: list[str]) -> ClientFeatures:
    async def elicit(server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        asked.append(f"{server}: {params.message}")
        return mcp.ElicitResult(action="accept", content={"name": name})

    return ClientFeatures(elicitation=elicit)


async def _requests_seen(server: ServerConnection) -> dict[str, int]:
    seen = await server.call_tool("requests_seen", {}, call_id="r")
    counts: dict[str, int] = json.loads(seen.text)
    return counts


async def test_a_prompt_and_a_read_that_ask_first_are_answered_and_sent_again(
    stdio_server: StdioServer,
) -> None:
    asked: list[str] = []
    async with ServerConnection(stdio_server("modern"), features=_answering("Ada", asked)) as modern:
        prompt = await modern.content.get_prompt("greeting")
        letter = await modern.content.read_resource("letter://tea")
        assert modern.protocol_version == "2026-07-28"

    assert [message.content for message in prompt.messages] == ["Write a greeting for Ada."]
    assert [part.text for part in letter] == ["Dear Ada, about tea."]
    assert asked == ["modern: Who is this for?"] * 2


async def test_a_prompt_that_asks_a_client_without_elicitation_fails_with_a_reason(
    stdio_server: StdioServer,
) -> None:
    async with ServerConnection(stdio_server("modern")) as modern:
        with pytest.raises(ServerError) as raised:
            await modern.content.get_prompt("greeting")
    assert "'modern'" in str(raised.value)
    assert "'greeting'" in str(raised.value)
    assert "elicitation" in str(raised.value).lower()


async def test_listings_and_reads_within_their_ttl_are_not_fetched_again(stdio_server: StdioServer) -> None:
    async with ServerConnection(stdio_server("modern")) as modern:
        for _ in range(3):
            await modern.content.list_prompts()
            await modern.content.list_resources()
            await modern.content.list_resource_templates()
            await modern.content.read_resource("note://plain")
        cached = await _requests_seen(modern)
        await modern.content.list_prompts(refresh=True)
        refreshed = await _requests_seen(modern)

    hinted = ("prompts/list", "resources/list", "resources/templates/list", "resources/read")
    assert {method: cached.get(method) for method in hinted} == dict.fromkeys(hinted, 1)
    assert refreshed["prompts/list"] == 2


async def test_listings_whose_ttl_ran_out_are_fetched_again(stdio_server: StdioServer) -> None:
    config = stdio_server("modern")
    stale_at_once = config.model_copy(update={"args": [*config.args, "--ttl-ms", "0"]})
    async with ServerConnection(stale_at_once) as modern:
        for _ in range(3):
            await modern.content.list_prompts()
            await modern.content.read_resource("note://plain")
        seen = await _requests_seen(modern)
    assert (seen["prompts/list"], seen["resources/read"]) == (3, 3)


async def test_a_listing_within_its_ttl_goes_stale_when_the_server_says_it_changed(
    stdio_server: StdioServer,
) -> None:
    changed = anyio.Event()
    config = stdio_server("modern")
    async with ServerConnection(config, on_list_changed=lambda server, kind: changed.set()) as modern:
        before = {prompt.name for prompt in await modern.content.list_prompts()}
        await modern.call_tool("add_prompt", {"name": "fresh"}, call_id="a")
        with anyio.fail_after(10):
            await changed.wait()
        after = {prompt.name for prompt in await modern.content.list_prompts()}
        seen = await _requests_seen(modern)
    assert "fresh" not in before
    assert "fresh" in after
    assert seen["prompts/list"] == 2


async def test_a_tool_listing_is_kept_while_its_ttl_lasts_and_asked_for_again_once_it_ran_out(
    stdio_server: StdioServer,
) -> None:
    config = stdio_server("modern")
    stale_at_once = config.model_copy(update={"args": [*config.args, "--ttl-ms", "0"]})
    async with ServerConnection(config) as kept, ServerConnection(stale_at_once) as relisted:
        for _ in range(3):
            await kept.list_tools()
            await relisted.list_tools()
        seen_kept = await _requests_seen(kept)
        seen_relisted = await _requests_seen(relisted)
    assert (seen_kept["tools/list"], seen_relisted["tools/list"]) == (1, 3)


async def test_tools_are_listed_again_when_offered_after_their_ttl_not_when_a_call_finds_one(
    stdio_server: StdioServer,
) -> None:
    config = stdio_server("modern")
    stale_at_once = config.model_copy(update={"args": [*config.args, "--ttl-ms", "0"]})
    async with Toolbox(Config(servers={"modern": stale_at_once}), native=False) as box:
        await box.list_tools()
        await box.list_tools()  # what an agent does at the start of each run
        await box.call("show_dashboard")
        seen = json.loads((await box.call("requests_seen")).text)
    assert seen["tools/list"] == 2


async def test_a_read_within_its_ttl_is_fetched_again_once_the_server_says_the_resource_changed(
    stdio_server: StdioServer,
) -> None:
    updated = anyio.Event()

    async def on_update(server: str, uri: str) -> None:
        updated.set()

    async with ServerConnection(stdio_server("modern")) as modern:
        await modern.content.subscribe("note://plain", on_update)
        before = await modern.content.read_resource("note://plain")
        await modern.call_tool("edit_note", {"text": "An edited note."}, call_id="e")
        with anyio.fail_after(10):
            await updated.wait()
        after = await modern.content.read_resource("note://plain")
    assert [part.text for part in before] == ["A plain note."]
    assert [part.text for part in after] == ["An edited note."]
