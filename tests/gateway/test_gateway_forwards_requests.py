"""An upstream server's requests to its client (sampling, elicitation) go through the gateway to the
client that made the call, and its answers come back; a client without the capability gets the
request declined, saying what is missing. With the SDK client's default (2026-07-28: the request comes
in an `input_required` round) and its 2025-11-25 mode (a request in the middle of the call)."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.client.session import ListRootsFnT

from server_paths import PublishedServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The .* capability is deprecated"),
]

MODES = ["auto", "legacy"]


class Downstream:
    """A client's user and model: they answer what the upstream server asks, and keep the questions."""

    def __init__(self, answer: dict[str, str | int | bool] | None = None) -> None:
        self.answer = answer or {"name": "Ada", "age": 36}
        self.prompts: list[mcp.CreateMessageRequestParams] = []
        self.forms: list[mcp.ElicitRequestParams] = []

    async def sample(
        self, context: ClientRequestContext, params: mcp.CreateMessageRequestParams
    ) -> mcp.CreateMessageResult:
        self.prompts.append(params)
        return mcp.CreateMessageResult(
            role="assistant",
            content=mcp.TextContent(type="text", text="A cat sat."),
            model="downstream-model",
        )

    async def elicit(
        self, context: ClientRequestContext, params: mcp.ElicitRequestParams
    ) -> mcp.ElicitResult:
        self.forms.append(params)
        return mcp.ElicitResult(action="accept", content=self.answer)


def _texts(result: mcp.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, mcp.TextContent)]


def _text(result: mcp.CallToolResult) -> str:
    assert isinstance(result.content[0], mcp.TextContent)
    return result.content[0].text


@pytest.mark.parametrize("mode", MODES)
async def test_sampling_and_elicitation_reach_the_client_that_made_the_call(
    tmp_path: Path, mode: str
) -> None:
    user = Downstream()
    started = gateway(tmp_path, {"asks_client": our_server("asks_client")})
    async with Client(
        started, mode=mode, sampling_callback=user.sample, elicitation_callback=user.elicit
    ) as client:
        summary = await client.call_tool("summarize", {"text": "The cat sat on the mat all day."})
        contact = await client.call_tool("ask_contact", {})
    assert _text(summary) == "A cat sat."
    [prompt] = user.prompts
    assert prompt.system_prompt == "Summarize in one line."
    assert prompt.messages[0].content == mcp.TextContent(type="text", text="The cat sat on the mat all day.")
    assert _text(contact) == "accepted Ada (36)"
    [form] = user.forms
    assert form.message == "Who should we contact?"


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_the_capability_has_the_request_declined_saying_what_is_missing(
    tmp_path: Path, mode: str
) -> None:
    async with Client(gateway(tmp_path, {"asks_client": our_server("asks_client")}), mode=mode) as client:
        summary = await client.call_tool("summarize", {"text": "anything"})
        contact = await client.call_tool("ask_contact", {})
    assert summary.is_error
    assert "does not offer sampling" in _text(summary)
    assert contact.is_error
    assert "does not offer elicitation" in _text(contact)


async def test_server_everything_samples_and_asks_through_the_gateway(
    tmp_path: Path, published_server: PublishedServer
) -> None:
    user = Downstream({"name": "Ada Lovelace", "check": True})
    published = published_server("server-everything")
    started = gateway(tmp_path, {"everything": {"command": published.command, "args": published.args}})
    async with Client(started, sampling_callback=user.sample, elicitation_callback=user.elicit) as client:
        sampled = await client.call_tool("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 20})
        asked = await client.call_tool("trigger-elicitation-request", {})
    assert "- Name: Ada Lovelace" in "".join(_texts(asked))
    assert not sampled.is_error, _text(sampled)
    assert "A cat sat." in _text(sampled)
    [prompt] = user.prompts
    assert prompt.messages[0].content == mcp.TextContent(
        type="text", text="Resource trigger-sampling-request context: Say hi"
    )


def _roots_callback(*uris: str) -> ListRootsFnT:
    async def list_roots(context: ClientRequestContext) -> mcp.ListRootsResult:
        return mcp.ListRootsResult(roots=[mcp.Root(uri=uri) for uri in uris])

    return list_roots


@pytest.mark.parametrize("mode", MODES)
async def test_a_servers_roots_are_the_roots_of_the_client_that_made_the_call(
    tmp_path: Path, mode: str
) -> None:
    started = gateway(tmp_path, {"asks_client": our_server("asks_client")})
    async with Client(started, mode=mode, list_roots_callback=_roots_callback("file:///work/site")) as client:
        listed = await client.call_tool("show_roots", {})
    assert _text(listed) == "file:///work/site"

    async with Client(started, mode=mode) as client:
        refused = await client.call_tool("show_roots", {})
    assert refused.is_error
    assert "does not offer roots" in _text(refused)


async def test_a_servers_roots_outside_calls_come_from_a_client_that_has_roots(tmp_path: Path) -> None:
    """A client says its roots changed; the server behind the gateway hears it and lists them at once."""
    started = gateway(tmp_path, {"asks_client": our_server("asks_client")})
    roots = _roots_callback("file:///work/notes", "file:///work/site")
    async with Client(started, mode="legacy", list_roots_callback=roots) as client:
        await client.list_tools()  # connects the server
        await client.send_roots_list_changed()
        listed = await client.call_tool("await_roots_change", {})
    assert _text(listed) == "file:///work/notes\nfile:///work/site"


@pytest.mark.parametrize("mode", MODES)
async def test_a_page_to_open_reaches_the_client_and_its_completion_follows(
    tmp_path: Path, mode: str
) -> None:
    opened: list[str] = []
    completed = anyio.Event()

    async def open_page(context: ClientRequestContext, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        assert isinstance(params, mcp.ElicitRequestURLParams)
        opened.append(params.url)
        return mcp.ElicitResult(action="accept")

    async def on_message(message: object) -> None:
        if (
            isinstance(message, mcp.ElicitCompleteNotification)
            and message.params.elicitation_id == "elicit-1"
        ):
            completed.set()

    started = gateway(tmp_path, {"asks_client": our_server("asks_client")})
    async with Client(
        started, mode=mode, elicitation_callback=open_page, message_handler=on_message
    ) as client:
        result = await client.call_tool("ask_to_open", {"url": "https://example.com/sign-in"})
        if (
            mode == "legacy"
        ):  # on 2026-07-28 it may come after the call, when there is no stream to send it on
            with anyio.fail_after(20):
                await completed.wait()
    assert _text(result) == "accept"
    assert opened == ["https://example.com/sign-in"]
