"""An upstream server that crashes is started again on the next request, while the gateway's client stays
connected and sees nothing but the one failed call."""

from __future__ import annotations

from pathlib import Path

import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


def _pid(result: mcp.CallToolResult) -> int:
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, mcp.TextContent)
    return int(block.text)


async def test_a_crashed_upstream_is_restarted_on_the_next_call_and_the_client_stays(tmp_path: Path) -> None:
    async with Client(gateway(tmp_path, {"basic": our_server("basic")})) as client:
        before = _pid(await client.call_tool("pid", {}))
        crashed = await client.call_tool("crash", {})
        assert crashed.is_error  # the call died with the server, and says so
        assert isinstance(crashed.content[0], mcp.TextContent)
        assert "basic" in crashed.content[0].text

        after = _pid(await client.call_tool("pid", {}))
        assert after != before
        echoed = await client.call_tool("echo", {"text": "still here"})
        assert echoed.content == [mcp.TextContent(type="text", text="still here")]


async def test_resources_and_prompts_of_a_crashed_upstream_come_back_on_the_next_request(
    tmp_path: Path,
) -> None:
    async with Client(gateway(tmp_path, {"library": our_server("library")}), mode="legacy") as client:
        assert "note://readme" in {r.uri for r in (await client.list_resources()).resources}
        assert (await client.call_tool("crash", {})).is_error

        read = await client.read_resource("note://readme")
        assert read.contents == [
            mcp.TextResourceContents(uri="note://readme", mime_type="text/plain", text="Read me first.")
        ]
        greeting = await client.get_prompt("greet")
        assert greeting.messages[0].content == mcp.TextContent(type="text", text="Hello!")
