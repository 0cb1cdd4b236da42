"""Which MCP revision a connection speaks: 2026-07-28 (`server/discover`) with servers that answer it,
the 2025-11-25 `initialize` handshake with the others or when the config asks for it."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import mcp_types as mcp
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.client_features import ClientFeatures

pytestmark = pytest.mark.anyio

StdioServer = Callable[..., ServerConfig]


async def test_a_server_that_answers_discover_is_spoken_to_in_the_stateless_revision(
    stdio_server: StdioServer,
) -> None:
    async with ServerConnection(stdio_server("basic")) as server:
        assert server.protocol_version is None  # not connected yet
        echo = await server.call_tool("echo", {"text": "hi"}, call_id="c")
        assert server.protocol_version == "2026-07-28"
    assert echo.text == "hi"


async def test_a_server_that_refuses_discover_gets_the_handshake(stdio_server: StdioServer) -> None:
    async with ServerConnection(stdio_server("asks_client")) as server:
        await server.connect()
        assert server.protocol_version == "2025-11-25"


async def test_the_config_can_ask_for_the_handshake_revision(stdio_server: StdioServer) -> None:
    async with ServerConnection(stdio_server("basic", protocol="2025-11-25")) as server:
        echo = await server.call_tool("echo", {"text": "hi"}, call_id="c")
        assert server.protocol_version == "2025-11-25"
    assert echo.text == "hi"


@pytest.mark.published
async def test_a_server_without_discover_gets_the_initialize_handshake(published_server) -> None:
    async with ServerConnection(published_server("server-everything")) as server:
        echo = await server.call_tool("echo", {"message": "hi"}, call_id="c")
        assert server.protocol_version == "2025-11-25"
    assert "hi" in echo.text


async def test_both_revisions_work_over_each_http_transport(basic_http_server) -> None:
    async with ServerConnection(basic_http_server.config("remote")) as server:
        echo = await server.call_tool("echo", {"text": "über http"}, call_id="c")
        assert server.protocol_version == "2026-07-28"
    async with ServerConnection(basic_http_server.config("remote", protocol="2025-11-25")) as server:
        again = await server.call_tool("echo", {"text": "über http"}, call_id="c")
        assert server.protocol_version == "2025-11-25"
    assert echo.text == again.text == "über http"


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
async def test_a_servers_questions_are_answered_on_either_revision(
    stdio_server: StdioServer, protocol: str
) -> None:
    """On 2026-07-28 a server cannot send requests: it returns its questions, and the call is resent."""
    asked: list[str] = []

    async def sample(server: str, params: mcp.CreateMessageRequestParams) -> mcp.CreateMessageResult:
        asked.append("sampling")
        return mcp.CreateMessageResult(
            role="assistant", content=mcp.TextContent(type="text", text="short."), model="scripted"
        )

    async def elicit(server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        asked.append("elicitation")
        return mcp.ElicitResult(action="decline")

    features = ClientFeatures(
        sampling=sample, elicitation=elicit, roots=lambda server: [mcp.Root(uri="file:///work")]
    )
    config = stdio_server("revisions", protocol=protocol)
    async with ServerConnection(config, features=features) as server:
        summary = await server.call_tool("summarize", {"text": "a long text"}, call_id="s")
        contact = await server.call_tool("ask_contact", {}, call_id="a")
        roots = await server.call_tool("show_roots", {}, call_id="r")
        spoken = server.protocol_version

    assert spoken == ("2026-07-28" if protocol == "auto" else "2025-11-25")
    assert (summary.text, contact.text, roots.text) == ("short.", "decline", "file:///work")
    assert asked == ["sampling", "elicitation"]


async def test_tool_changes_announced_only_to_listeners_reach_the_client(stdio_server: StdioServer) -> None:
    changed = anyio.Event()
    config = stdio_server("revisions")
    async with ServerConnection(config, on_tools_changed=lambda name: changed.set()) as server:
        before = {tool.name for tool in await server.list_tools()}
        added = await server.call_tool("add_tool_quietly", {"name": "fresh"}, call_id="c")
        with anyio.fail_after(10):
            await changed.wait()
        after = {tool.name for tool in await server.list_tools()}
    assert added.text == "added fresh"
    assert "fresh" not in before
    assert "fresh" in after


@pytest.mark.slow
async def test_a_tool_that_asks_the_old_way_is_explained_and_works_on_the_handshake_revision(
    stdio_server: StdioServer,
) -> None:
    features = ClientFeatures(roots=lambda server: [mcp.Root(uri="file:///work")])
    async with ServerConnection(stdio_server("revisions"), features=features) as server:
        refused = await server.call_tool("roots_mid_call", {}, call_id="c")
    pinned = stdio_server("revisions", protocol="2025-11-25")
    async with ServerConnection(pinned, features=features) as server:
        answered = await server.call_tool("roots_mid_call", {}, call_id="c")

    assert refused.is_error
    assert '"protocol": "2025-11-25"' in refused.text
    assert answered.text == "file:///work"


@pytest.mark.slow
async def test_a_server_that_never_acknowledges_the_tool_stream_is_used_without_it(
    stdio_server: StdioServer,
) -> None:
    config = stdio_server("revisions", connect_timeout=30)
    muted = config.model_copy(update={"args": [*config.args, "--mute-listen"]})
    async with ServerConnection(muted) as server:
        added = await server.call_tool("add_tool_quietly", {"name": "fresh"}, call_id="c")
        assert server.protocol_version == "2026-07-28"
    assert added.text == "added fresh"
