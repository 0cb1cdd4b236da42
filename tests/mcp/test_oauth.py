"""OAuth 2.1 against a real authorization server and a protected MCP server on 127.0.0.1 (the SDK's
server-side auth pieces), with the browser step played headless through the `SignIn` callback."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from oauth_helpers import HeadlessBrowser, OAuthServer, start_oauth_server

from toolbridge.config.model import ServerConfig
from toolbridge.errors import AuthenticationError
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.oauth import FileTokenStore, OAuth

pytestmark = pytest.mark.anyio


@pytest.fixture
def oauth_server() -> Iterator[OAuthServer]:
    server = start_oauth_server()
    yield server
    server.stop()


def features(store: FileTokenStore, browser: HeadlessBrowser | None = None) -> ClientFeatures:
    return ClientFeatures(oauth=OAuth(tokens=store, sign_in=browser))


async def call(config: ServerConfig, feats: ClientFeatures, tool: str = "whoami") -> str:
    async with ServerConnection(config, features=feats) as server:
        result = await server.call_tool(tool, {}, call_id="c1")
    assert not result.is_error, result.text
    return result.text


async def test_first_use_signs_in_through_the_callback_and_the_tokens_are_kept(
    oauth_server: OAuthServer, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    browser = HeadlessBrowser()

    assert "with scopes mcp:read" in await call(oauth_server.config(), features(store, browser))

    assert [server for server, _ in browser.asked] == ["secure"]
    asked = browser.parameters()
    assert asked["code_challenge_method"] == "S256" and asked["code_challenge"]
    assert asked["resource"] == oauth_server.url  # RFC 8707: the token is for this server
    assert asked["scope"] == "mcp:read"  # from the server's scopes_supported
    assert asked["redirect_uri"].startswith("http://127.0.0.1:")
    assert [event["grant"] for event in oauth_server.events("token")] == ["authorization_code"]
    assert len(oauth_server.events("register")) == 1  # dynamic client registration
    # Owner-only file; a second run uses the stored token without asking anyone.
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert "mcp:read" in await call(oauth_server.config(), features(store))
    assert len(browser.asked) == 1
    assert len(oauth_server.events("authorize")) == 1


async def test_without_a_way_to_sign_in_the_error_says_how(oauth_server: OAuthServer, tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    with pytest.raises(AuthenticationError) as caught:
        async with ServerConnection(oauth_server.config(), features=features(store)) as server:
            await server.connect()
    assert "toolbridge auth login secure" in str(caught.value)
