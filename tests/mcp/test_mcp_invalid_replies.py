"""Replies the MCP SDK cannot parse are named at once ("sent an invalid reply"), never waited on until timeout.

The server's timeout is far longer than the suite's per-test timeout: a reply that was waited on instead
of recognised would fail the test by hanging, not pass it late.
"""

from __future__ import annotations

import pytest

from toolbridge.errors import ServerError, ServerStartError
from toolbridge.mcp import ServerConnection

pytestmark = pytest.mark.anyio

NEVER = 3600.0


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("surrogate", "it is not valid JSON to the MCP SDK"),
        ("not_an_object", "it is not a JSON-RPC response"),
    ],
)
async def test_an_unparseable_reply_to_a_call_is_an_error_result_at_once(stdio_server, tool, reason) -> None:
    config = stdio_server("invalid_replies", name="hostile", timeout=NEVER)
    async with ServerConnection(config) as server:
        result = await server.call_tool(tool, {}, call_id="c1")
        assert result.is_error
        assert result.error_kind == "server_error"
        assert f"Server 'hostile' sent an invalid reply to the call to {tool!r}: {reason}" in result.text
        # The session survives a bad reply: the next call works.
        after = await server.call_tool("echo", {"x": 1}, call_id="c2")
        assert not after.is_error, after.text
        assert after.text == '{"x": 1}'


async def test_noise_that_answers_no_request_is_ignored_and_the_real_reply_arrives(stdio_server) -> None:
    config = stdio_server("invalid_replies", name="hostile", timeout=NEVER)
    async with ServerConnection(config) as server:
        result = await server.call_tool("unparseable", {}, call_id="c1")
    assert not result.is_error, result.text
    assert result.text == "after the noise"


async def test_a_tool_list_nested_200_levels_is_named_an_invalid_reply(stdio_server) -> None:
    config = stdio_server("invalid_replies", name="hostile", timeout=NEVER)
    config = config.model_copy(update={"args": [*config.args, "--deep-schema"]})
    async with ServerConnection(config) as server:
        with pytest.raises(ServerError) as raised:
            await server.list_tools()
    message = str(raised.value)
    assert "Server 'hostile' sent an invalid reply to 'tools/list'" in message
    assert "recursion limit exceeded" in message


async def test_an_unparseable_handshake_reply_fails_the_start_at_once(stdio_server) -> None:
    config = stdio_server("invalid_replies", name="hostile", timeout=NEVER, connect_timeout=NEVER)
    config = config.model_copy(update={"args": [*config.args, "--bad-handshake"]})
    async with ServerConnection(config) as server:
        with pytest.raises(ServerStartError) as raised:
            await server.connect()
    assert "Server 'hostile' sent an invalid reply to the MCP handshake" in str(raised.value)


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("surrogate", "it is not valid JSON to the MCP SDK"),
        ("not_an_object", "it is not a JSON-RPC response"),
    ],
)
async def test_over_http_an_unparseable_reply_is_named_the_same_way(http_server, tool, reason) -> None:
    config = http_server("invalid_replies", "streamable-http").config(name="hostile", timeout=NEVER)
    async with ServerConnection(config) as server:
        result = await server.call_tool(tool, {}, call_id="c1")
        assert result.is_error
        assert f"Server 'hostile' sent an invalid reply to the call to {tool!r}: {reason}" in result.text
        after = await server.call_tool("echo", {"x": 1}, call_id="c2")
        assert after.text == '{"x": 1}'
