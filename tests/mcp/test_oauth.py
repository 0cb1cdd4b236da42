"""OAuth 2.1 against a real authorization server and a protected MCP server on 127.0.0.1 (the SDK's
server-side auth pieces), with the browser step played headless through the `SignIn` callback."""

from __future__ import annotations

import logging
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import uvicorn

from oauth_helpers import HeadlessBrowser, OAuthServer, free_port, running_oauth_server, stored_login
from toolbridge.config._server_auth import ServerAuth
from toolbridge.config.model import ServerConfig
from toolbridge.errors import AuthenticationError
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.oauth import FileTokenStore, OAuth, ServerTokenStorage

pytestmark = pytest.mark.anyio


@pytest.fixture
def oauth_sse_server() -> Iterator[OAuthServer]:
    with running_oauth_server("--transport", "sse") as server:
        yield server


def features(store: FileTokenStore, browser: HeadlessBrowser | None = None) -> ClientFeatures:
    return ClientFeatures(oauth=OAuth(tokens=store, sign_in=browser))


async def call(config: ServerConfig, feats: ClientFeatures, tool: str = "whoami") -> str:
    async with ServerConnection(config, features=feats) as server:
        result = await server.call_tool(tool, {}, call_id="c1")
    assert not result.is_error, result.text
    return result.text


async def test_first_use_signs_in_through_the_callback_and_the_tokens_are_kept(
    oauth_server: OAuthServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = FileTokenStore(tmp_path / "tokens.json")
    browser = HeadlessBrowser()

    assert "with scopes mcp:read" in await call(oauth_server.config(), features(store, browser))
    stored = await stored_login(oauth_server.config(), store)
    assert stored is not None
    assert stored.tokens is not None
    assert stored.tokens.refresh_token
    for secret in (stored.tokens.access_token, stored.tokens.refresh_token):
        assert secret not in caplog.text  # never logged, even at debug level

    assert [server for server, _ in browser.asked] == ["secure"]
    asked = browser.parameters()
    assert asked["code_challenge_method"] == "S256"
    assert asked["code_challenge"]
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


async def test_calls_signed_with_a_token_run_concurrently(oauth_server: OAuthServer, tmp_path: Path) -> None:
    # The SDK's provider holds one lock per request until its answer; calls would queue and never meet.
    store = FileTokenStore(tmp_path / "tokens.json")
    texts: list[str] = []
    async with ServerConnection(oauth_server.config(), features=features(store, HeadlessBrowser())) as server:
        await server.connect()

        async def meet(tag: str) -> None:
            arguments = {"tag": tag, "peers": 3}
            texts.append((await server.call_tool("rendezvous", arguments, call_id=tag)).text)

        async with anyio.create_task_group() as group:
            for tag in ("a", "b", "c"):
                group.start_soon(meet, tag)
    assert sorted(texts) == [f"{tag} met its peers" for tag in ("a", "b", "c")]
    assert [event["grant"] for event in oauth_server.events("token")] == ["authorization_code"]


async def test_the_older_sse_transport_signs_in_the_same_way(
    oauth_sse_server: OAuthServer, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    browser = HeadlessBrowser()
    assert "mcp:read" in await call(oauth_sse_server.config(), features(store, browser))
    assert browser.parameters()["resource"] == oauth_sse_server.url
    assert "mcp:read" in await call(oauth_sse_server.config(), features(store))  # the stored token
    assert len(browser.asked) == 1


async def test_without_a_way_to_sign_in_the_error_says_how(oauth_server: OAuthServer, tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    with pytest.raises(AuthenticationError) as caught:
        async with ServerConnection(oauth_server.config(), features=features(store)) as server:
            await server.connect()
    assert "toolbridge auth login secure" in str(caught.value)


async def test_tokens_are_refreshed_before_they_expire_also_after_a_restart(
    oauth_server: OAuthServer, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    browser = HeadlessBrowser()
    await call(oauth_server.config(), features(store, browser))
    signed_in = await stored_login(oauth_server.config(), store)
    assert signed_in is not None
    assert signed_in.tokens is not None
    assert signed_in.expires_at is not None
    assert signed_in.tokens.refresh_token

    # As if time had passed: the token expires in 30 s (inside the refresh margin), then has expired.
    # Each new connection (as in a new process, reading the file) refreshes rather than signing in again.
    tokens_seen = {signed_in.tokens.access_token}
    for expires_in in (30, -10):
        stored = await stored_login(oauth_server.config(), store)
        assert stored is not None
        assert stored.tokens is not None
        await ServerTokenStorage(oauth_server.config(), store).save(
            stored.model_copy(update={"expires_at": time.time() + expires_in})
        )
        assert "mcp:read" in await call(oauth_server.config(), features(store))
        refreshed = await stored_login(oauth_server.config(), store)
        assert refreshed is not None
        assert refreshed.tokens is not None
        assert refreshed.tokens.access_token not in tokens_seen
        tokens_seen.add(refreshed.tokens.access_token)

    grants = [event["grant"] for event in oauth_server.events("token")]
    assert grants == ["authorization_code", "refresh_token", "refresh_token"]
    assert len(browser.asked) == 1
    assert len(oauth_server.events("authorize")) == 1
    assert all(event["resource"] == oauth_server.url for event in oauth_server.events("token"))


async def test_a_403_insufficient_scope_steps_up_to_the_scopes_the_server_names(
    oauth_server: OAuthServer, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    browser = HeadlessBrowser()
    async with ServerConnection(oauth_server.config(), features=features(store, browser)) as server:
        assert "mcp:read" in (await server.call_tool("whoami", {}, call_id="c1")).text
        report = await server.call_tool("admin_report", {}, call_id="c2")
        assert not report.is_error, report.text
        assert report.text == "admin report: all systems nominal"
        assert "mcp:admin" in (await server.call_tool("whoami", {}, call_id="c3")).text

    assert len(browser.asked) == 2
    assert browser.parameters(0)["scope"] == "mcp:read"
    assert browser.parameters(1)["scope"].split() == ["mcp:read", "mcp:admin"]
    stored = await stored_login(oauth_server.config(), store)
    assert stored is not None
    assert stored.scope is not None
    assert "mcp:admin" in stored.scope.split()


@pytest.mark.slow
async def test_a_token_for_another_server_is_refused_and_a_new_one_is_signed_in_for(tmp_path: Path) -> None:
    # The same signing secret: tokens of one look genuine to the other.
    with running_oauth_server() as first, running_oauth_server() as second:
        store = FileTokenStore(tmp_path / "tokens.json")
        browser = HeadlessBrowser()
        await call(first.config("a"), features(store, browser))
        login_a = await stored_login(first.config("a"), store)
        assert login_a is not None
        assert login_a.tokens is not None
        token_a = login_a.tokens.access_token
        # The audience check is what refuses it: the same token works at the server it was issued for.
        assert first.status_with(token_a) == 200
        assert second.status_with(token_a) == 401

        # A's sign-in presented to B (as if B's record held it): B refuses, toolbridge signs in to B.
        await ServerTokenStorage(second.config("b"), store).save(login_a)
        assert "mcp:read" in await call(second.config("b"), features(store, browser))

        assert [server for server, _ in browser.asked] == ["a", "b"]
        assert browser.parameters()["resource"] == second.url
        assert len(second.events("register")) == 1  # A's client registration is not reused at B
        login_b = await stored_login(second.config("b"), store)
        assert login_b is not None
        assert login_b.tokens is not None
        assert login_b.tokens.access_token != token_a
        assert second.status_with(login_b.tokens.access_token) == 200


async def test_a_client_registered_by_hand_is_used_instead_of_registering(tmp_path: Path) -> None:
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    with running_oauth_server("--client", f"my-app:s3cret:{redirect}") as server:
        store = FileTokenStore(tmp_path / "tokens.json")
        browser = HeadlessBrowser()
        auth = ServerAuth(client_id="my-app", client_secret="s3cret", redirect_uri=redirect)
        assert "client my-app" in await call(server.config(auth=auth), features(store, browser))
        assert server.events("register") == []
        assert browser.parameters()["client_id"] == "my-app"
        assert browser.parameters()["redirect_uri"] == redirect
        assert "s3cret" not in store.path.read_text()  # the config holds the secret; the file need not


async def test_client_credentials_sign_in_with_no_person(tmp_path: Path) -> None:
    with running_oauth_server("--client", "robot:r0b0t-secret") as server:
        store = FileTokenStore(tmp_path / "tokens.json")
        auth = ServerAuth(
            grant="client_credentials", client_id="robot", client_secret="r0b0t-secret", issuer=server.issuer
        )
        assert "client robot" in await call(server.config(auth=auth), features(store))
        assert [(e["grant"], e["resource"]) for e in server.events("token")] == [
            ("client_credentials", server.url)
        ]
        assert server.events("authorize") == []


async def test_a_client_id_metadata_document_is_the_client_where_the_server_supports_it(
    tmp_path: Path,
) -> None:
    with running_oauth_server("--metadata-documents") as server:
        document = "https://app.example.com/toolbridge-client.json"
        browser = HeadlessBrowser()
        auth = ServerAuth(client_metadata_url=document)
        config = server.config(auth=auth)
        assert "mcp:read" in await call(config, features(FileTokenStore(tmp_path / "t.json"), browser))
        assert server.events("register") == []  # no dynamic registration
        assert browser.parameters()["client_id"] == document
        assert [event["client_id"] for event in server.events("metadata_document")] == [document]


async def test_a_server_without_protected_resource_metadata_is_found_the_older_way(tmp_path: Path) -> None:
    # As 2025-03-26 servers: the origin's authorization server.
    with running_oauth_server("--legacy") as server:
        browser = HeadlessBrowser()
        assert "mcp:read" in await call(
            server.config(), features(FileTokenStore(tmp_path / "t.json"), browser)
        )
        assert browser.asked[0][1].startswith(f"{server.issuer}/authorize?")
        assert len(server.events("register")) == 1
        # Both well-known places were tried (path, then root) before the origin's metadata was used.
        missing = [event["path"] for event in server.events("resource_metadata_missing")]
        assert missing[:2] == [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
        ]


async def test_metadata_naming_another_resource_stops_the_sign_in(tmp_path: Path) -> None:
    with running_oauth_server("--advertise-resource", "https://elsewhere.example.com/mcp") as server:
        browser = HeadlessBrowser()
        with pytest.raises(AuthenticationError) as caught:
            await call(server.config(), features(FileTokenStore(tmp_path / "t.json"), browser))
        message = str(caught.value)
        assert "signing in with OAuth failed" in message
        assert "https://elsewhere.example.com/mcp" in message
        assert browser.asked == []  # no token is asked for another server's audience


async def test_a_401_without_any_oauth_to_offer_says_to_configure_credentials(tmp_path: Path) -> None:
    async def always_401(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send(
            {"type": "http.response.start", "status": 401, "headers": [(b"www-authenticate", b"Bearer")]}
        )
        await send({"type": "http.response.body", "body": b"authentication required"})

    listening = socket.create_server(("127.0.0.1", 0))  # accepts (queues) connections from now on
    port = listening.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(always_401, log_config=None, lifespan="off"))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve, [listening])
        config = ServerConfig(name="locked", transport="streamable-http", url=f"http://127.0.0.1:{port}/mcp")
        with pytest.raises(AuthenticationError) as caught:
            await call(config, features(FileTokenStore(tmp_path / "t.json"), HeadlessBrowser()))
        server.should_exit = True
    assert "answered HTTP 401" in str(caught.value)
    assert "'headers'" in str(caught.value)


@pytest.mark.parametrize("grant", ["authorization_code", "client_credentials"])
async def test_a_client_registered_for_basic_authentication_says_so_in_its_config(
    tmp_path: Path, grant: str
) -> None:
    """The server advertises post first, but this client was registered for Basic: the config's
    `token_endpoint_auth_method` is what it uses (without it, the advertised post is refused)."""
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    with running_oauth_server("--basic-clients", "--client", f"my-app:s3cret:{redirect}") as server:
        entry: dict[str, Any] = {"client_id": "my-app", "client_secret": "s3cret", "grant": grant}
        if grant == "authorization_code":
            entry["redirect_uri"] = redirect
        else:
            entry["issuer"] = server.issuer
        for method, works in ((None, False), ("client_secret_basic", True)):
            auth = ServerAuth(**entry, token_endpoint_auth_method=method)
            feats = features(FileTokenStore(tmp_path / f"{method}.json"), HeadlessBrowser())
            if works:
                assert "client my-app" in await call(server.config(auth=auth), feats)
            else:
                with pytest.raises(AuthenticationError, match=r"invalid_client|401"):
                    await call(server.config(auth=auth), feats)


async def test_a_client_that_registered_itself_keeps_the_method_of_its_registration(tmp_path: Path) -> None:
    """The server advertises Basic first, but registered the client for post with a secret of its own: the
    registration's method is used (the advertised order is for clients registered by hand, whose method
    toolbridge cannot know)."""
    with running_oauth_server("--advertise-basic-first") as server:
        browser = HeadlessBrowser()
        assert "mcp:read" in await call(
            server.config(), features(FileTokenStore(tmp_path / "t.json"), browser)
        )
        assert len(server.events("register")) == 1
        assert [event["grant"] for event in server.events("token")] == ["authorization_code"]
