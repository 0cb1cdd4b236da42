"""What changes upstream reaches the gateway's clients: list changes of tools, resources and prompts, and
updates of the resources a client follows, on both revisions a client may speak."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)

from toolbridge.config.model import Config
from toolbridge.gateway import Gateway
from toolbridge.tools import Toolbox

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

WAIT = 20  # seconds: a notification that never comes fails the test instead of hanging it


class Notifications:
    """What a client was sent, and a way to wait for what it expects."""

    def __init__(self) -> None:
        self.seen: list[object] = []
        self._arrived = anyio.Event()

    async def __call__(self, message: IncomingMessage) -> None:
        self.seen.append(message)
        self._arrived.set()
        self._arrived = anyio.Event()

    async def wait_until(self, found: Callable[[list[object]], bool]) -> None:
        with anyio.fail_after(WAIT):
            while not found(self.seen):
                await self._arrived.wait()

    async def wait_for(self, kind: type[object]) -> None:
        await self.wait_until(lambda seen: any(isinstance(message, kind) for message in seen))

    def updated_uris(self) -> list[str]:
        return [m.params.uri for m in self.seen if isinstance(m, mcp.ResourceUpdatedNotification)]


def _servers(**library: str) -> dict[str, dict[str, object]]:
    return {"basic": our_server("basic"), "library": our_server("library", **library)}


async def test_list_changes_upstream_reach_a_client_on_the_2025_revision(tmp_path: Path) -> None:
    notified = Notifications()
    async with Client(gateway(tmp_path, _servers()), mode="legacy", message_handler=notified) as client:
        await client.list_tools()
        assert (await client.call_tool("add_tool", {"name": "shout"})).is_error is False
        await notified.wait_for(mcp.ToolListChangedNotification)
        assert "shout" in {tool.name for tool in (await client.list_tools()).tools}

        await client.call_tool("add_note", {"name": "fresh", "text": "New."})
        await notified.wait_for(mcp.ResourceListChangedNotification)
        assert "note://fresh" in {r.uri for r in (await client.list_resources()).resources}

        await client.call_tool("add_prompt", {"name": "brief"})
        await notified.wait_for(mcp.PromptListChangedNotification)
        assert "brief" in {p.name for p in (await client.list_prompts()).prompts}


async def test_list_changes_upstream_reach_a_client_listening_on_the_2026_revision(tmp_path: Path) -> None:
    async with Client(gateway(tmp_path, _servers())) as client:
        assert client.protocol_version == "2026-07-28"
        kinds = {"tools_list_changed": True, "resources_list_changed": True, "prompts_list_changed": True}
        async with client.listen(**kinds) as changes:
            await client.call_tool("add_tool", {"name": "shout"})
            await client.call_tool("add_note", {"name": "fresh", "text": "New."})
            await client.call_tool("add_prompt", {"name": "brief"})
            seen: set[type[object]] = set()
            with anyio.fail_after(WAIT):
                async for event in changes:
                    seen.add(type(event))
                    if seen >= {ToolsListChanged, ResourcesListChanged, PromptsListChanged}:
                        break
        assert "shout" in {tool.name for tool in (await client.list_tools()).tools}
        assert "brief" in {p.name for p in (await client.list_prompts()).prompts}


async def test_a_subscribed_client_hears_of_updates_until_it_unsubscribes(tmp_path: Path) -> None:
    # Both ends on the 2025 revision: subscribe and unsubscribe requests all the way.
    notified = Notifications()
    servers = _servers(protocol="2025-11-25")
    async with Client(gateway(tmp_path, servers), mode="legacy", message_handler=notified) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK marks subscribing deprecated for the 2026 revision
            await client.subscribe_resource("note://readme")
        touched = await client.call_tool("touch", {"uri": "note://readme"})
        assert touched.content == [mcp.TextContent(type="text", text="touched note://readme")]
        await notified.wait_until(lambda _: notified.updated_uris() == ["note://readme"])

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.unsubscribe_resource("note://readme")
            await client.subscribe_resource("note://todo")
        # The server still tells of note://readme (it cannot unsubscribe); the gateway no longer passes it on.
        await client.call_tool("touch", {"uri": "note://readme"})
        await client.call_tool("touch", {"uri": "note://todo"})
        await notified.wait_until(lambda _: "note://todo" in notified.updated_uris())
        assert notified.updated_uris() == ["note://readme", "note://todo"]


@pytest.mark.parametrize("upstream_revision", ["auto", "2025-11-25"])
async def test_a_listen_stream_naming_a_resource_hears_of_its_updates(
    tmp_path: Path, upstream_revision: str
) -> None:
    async with Client(gateway(tmp_path, _servers(protocol=upstream_revision))) as client:
        async with client.listen(resource_subscriptions=["note://todo"]) as updates:
            assert updates.honored.resource_subscriptions == ["note://todo"]
            assert not (await client.call_tool("touch", {"uri": "note://todo"})).is_error
            with anyio.fail_after(WAIT):
                event = await updates.__anext__()
        assert event == ResourceUpdated(uri="note://todo")


async def test_a_listen_stream_is_not_promised_updates_of_a_resource_nobody_has(tmp_path: Path) -> None:
    async with (
        Client(gateway(tmp_path, _servers())) as client,
        client.listen(tools_list_changed=True, resource_subscriptions=["nowhere://x"]) as stream,
    ):
        assert stream.honored.tools_list_changed
        assert not stream.honored.resource_subscriptions


async def test_every_connected_client_hears_of_a_change(stdio_server: Any) -> None:
    config = Config(servers={"library": stdio_server("library")})
    async with Toolbox(config, native=False) as toolbox:
        shared = Gateway(toolbox).server
        heard_first, heard_second = Notifications(), Notifications()
        async with (
            Client(shared, mode="legacy", message_handler=heard_first) as first,
            Client(shared, mode="legacy", message_handler=heard_second) as second,
        ):
            await first.call_tool("add_note", {"name": "fresh", "text": "New."})
            await heard_first.wait_for(mcp.ResourceListChangedNotification)
            await heard_second.wait_for(mcp.ResourceListChangedNotification)
            assert "note://fresh" in {r.uri for r in (await second.list_resources()).resources}
