"""What HTTP servers answer, named as such: sign-in needed (401/403), and an old SSE-only server
reached with no transport configured (streamable HTTP is tried first, then SSE)."""

from __future__ import annotations

import pytest

from toolbridge.config.loader import load_config
from toolbridge.errors import ServerStartError
from toolbridge.mcp import ServerConnection

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_a_server_that_wants_sign_in_is_named_as_such(http_server, transport: str) -> None:
    guarded = http_server("guarded", transport)
    anonymous = guarded.config("guarded")
    wrong_token = guarded.config("guarded", headers={"Authorization": "Bearer guess"})
    right_token = guarded.config("guarded", headers={"Authorization": "Bearer letmein"})

    async with ServerConnection(anonymous) as server:
        with pytest.raises(ServerStartError) as unauthorized:
            await server.connect()
    async with ServerConnection(wrong_token) as server:
        with pytest.raises(ServerStartError) as forbidden:
            await server.connect()
    async with ServerConnection(right_token) as server:
        secret = await server.call_tool("secret", {}, call_id="s")

    # Without credentials, the OAuth sign-in is tried first; either way the 401 is named.
    assert "HTTP 401" in str(unauthorized.value)
    assert "authentication required" in str(unauthorized.value)
    assert guarded.url in str(unauthorized.value)
    # With its own Authorization header the server is left to it: a refusal says so.
    assert f"HTTP 403 from {guarded.url}: access denied (configure `auth`" in str(forbidden.value)
    assert "handshake" not in str(unauthorized.value) + str(forbidden.value)
    assert secret.text == "the eagle has landed"


async def test_with_no_type_configured_an_old_sse_server_is_reached_after_streamable_http(
    http_server, tmp_path
) -> None:
    old = http_server("basic", "sse")
    url = old.url
    config_file = tmp_path / "toolbridge.json"
    config_file.write_text(
        f'{{"mcpServers": {{"old": {{"url": "{url}"}}, "said": {{"type": "http", "url": "{url}"}}}}}}'
    )
    loaded = load_config(config_file)
    assert loaded.servers["old"].transport == "sse"  # a /sse URL is taken at its word
    # What the loader makes of an untyped URL that does not say /sse (the test server serves only there).
    untyped = loaded.servers["old"].model_copy(update={"transport": "streamable-http", "sse_fallback": True})

    async with ServerConnection(untyped) as server:
        echoed = await server.call_tool("echo", {"text": "old but fine"}, call_id="e")
        transport = server.transport
    async with ServerConnection(loaded.servers["said"]) as server:
        with pytest.raises(ServerStartError) as typed:
            await server.connect()

    assert echoed.text == "old but fine"
    assert transport == "sse"
    assert "HTTP 405" in str(typed.value)  # a configured type is not second-guessed
    assert "'type': 'sse'" in str(typed.value)
