"""An HTTP server that goes away or forgets the session is found and reconnected, as a stdio server that
exits is: a ping finds an idle session dead, and a call refused for an unknown session is sent again on
a new one."""

from __future__ import annotations

import anyio
import pytest

from toolbridge.mcp import ServerConnection

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


async def test_a_ping_finds_an_idle_session_whose_server_went_away(http_server) -> None:
    first = http_server("basic", "streamable-http")
    config = first.config("remote", ping_interval=0.2, protocol="2025-11-25")
    async with ServerConnection(config) as server:
        before = await server.call_tool("pid", {}, call_id="p1")
        first.stop()
        with anyio.fail_after(10):
            await server.wait_session_ended()  # nothing was called: only the keep-alive ping can notice
        state, why = server.state, server.last_error
        http_server("basic", "streamable-http", port=first.port)
        after = await server.call_tool("pid", {}, call_id="p2")

    assert state == "disconnected"
    assert why is not None
    assert "The session ended" in why
    assert not after.is_error, after.text
    assert after.text != before.text  # a new server process, reached by a new session


async def test_a_call_to_a_session_the_restarted_server_forgot_is_sent_again_on_a_new_one(
    http_server,
) -> None:
    first = http_server("basic", "streamable-http")
    async with ServerConnection(first.config("remote", protocol="2025-11-25")) as server:
        before = await server.call_tool("pid", {}, call_id="p1")
        first.stop()
        http_server("basic", "streamable-http", port=first.port)
        # `add` is not annotated safe to retry: it is resent because the server refused it unseen.
        added = await server.call_tool("add", {"a": 1, "b": 2}, call_id="a")
        after = await server.call_tool("pid", {}, call_id="p2")

    assert (added.is_error, added.content[0].text) == (False, "3")  # type: ignore[union-attr]
    assert after.text != before.text
