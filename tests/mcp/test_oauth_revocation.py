"""Signing out revokes the tokens at the authorization server (RFC 7009) before forgetting them: against
the real authorization server of tests/servers/oauth_protected.py on 127.0.0.1, which refuses a revoked
token from then on."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from oauth_helpers import OAuthServer, running_oauth_server, signed_in, stored_login
from toolbridge.config._server_auth import ServerAuth
from toolbridge.mcp.oauth import FileTokenStore, ServerTokenStorage, sign_out
from toolbridge.mcp.oauth._tokens import StoredLogin

pytestmark = pytest.mark.anyio


def refresh_status(server: OAuthServer, login: StoredLogin) -> int:
    assert login.tokens is not None
    assert login.client is not None
    form = {
        "grant_type": "refresh_token",
        "refresh_token": login.tokens.refresh_token or "",
        "client_id": login.client.client_id or "",
    }
    return httpx2.post(f"{server.issuer}/token", data=form, timeout=10).status_code


async def test_sign_out_revokes_the_refresh_then_the_access_token_of_a_public_client(
    oauth_server: OAuthServer, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    config = oauth_server.config()
    login = await signed_in(config, store)
    assert login.tokens is not None
    assert oauth_server.status_with(login.tokens.access_token) == 200

    outcome = await sign_out(config, store)

    assert outcome.failures == []
    assert outcome.revoked == ["refresh_token", "access_token"]
    assert outcome.revocation_endpoint == f"{oauth_server.issuer}/revoke"
    assert outcome.removed
    assert await stored_login(config, store) is None
    revocations = oauth_server.events("revoke")
    assert [event["token_type"] for event in revocations] == ["refresh_token", "access_token"]
    assert {event["client_id"] for event in revocations} == {login.client.client_id if login.client else None}
    assert oauth_server.status_with(login.tokens.access_token) == 401
    assert refresh_status(oauth_server, login) == 400


async def test_a_confidential_client_authenticates_its_revocation_with_its_secret(tmp_path: Path) -> None:
    with running_oauth_server("--client", "robot:r0b0t-secret") as server:
        store = FileTokenStore(tmp_path / "tokens.json")
        auth = ServerAuth(
            grant="client_credentials", client_id="robot", client_secret="r0b0t-secret", issuer=server.issuer
        )
        config = server.config(auth=auth)
        login = await signed_in(config, store)
        assert login.tokens is not None

        outcome = await sign_out(config, store)

        assert outcome.failures == []
        assert outcome.revoked == ["refresh_token", "access_token"]
        # The SDK's revocation handler revokes only tokens of the client it authenticated.
        assert [event["client_id"] for event in server.events("revoke")] == ["robot", "robot"]
        assert server.status_with(login.tokens.access_token) == 401


async def test_a_failed_revocation_is_reported_and_the_tokens_are_removed_anyway(tmp_path: Path) -> None:
    with running_oauth_server("--revocation-fails") as server:
        store = FileTokenStore(tmp_path / "tokens.json")
        config = server.config()
        login = await signed_in(config, store)
        assert login.tokens is not None

        refused = await sign_out(config, store)

        assert refused.removed
        assert refused.revoked == []
        assert refused.failures == [
            f"revoking the {kind} failed: {server.issuer}/revoke answered 503 (temporarily_unavailable)"
            for kind in ("refresh token", "access token")
        ]
        assert await stored_login(config, store) is None
        assert server.status_with(login.tokens.access_token) == 200  # still valid: nothing revoked

        await signed_in(config, store)
    unreachable = await sign_out(config, store)  # the server is gone now
    assert unreachable.removed
    assert len(unreachable.failures) == 1
    assert unreachable.failures[0].startswith("its authorization server could not be reached")


async def test_tokens_stored_for_another_url_are_never_sent_to_this_server(
    oauth_server: OAuthServer, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    login = await signed_in(oauth_server.config(), store)
    # Only a sign-in of the same name for another URL is kept.
    elsewhere = oauth_server.config().model_copy(update={"url": "http://127.0.0.1:1/elsewhere"})
    assert await ServerTokenStorage(oauth_server.config(), store).forget()
    await ServerTokenStorage(elsewhere, store).save(login)

    outcome = await sign_out(oauth_server.config(), store)

    assert not outcome.removed
    assert await stored_login(elsewhere, store) == login.model_copy(update={"url": elsewhere.url})
    assert (outcome.revoked, outcome.failures) == ([], [])
    assert oauth_server.events("revoke") == []
