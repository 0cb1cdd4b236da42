"""The token file: owner-only, bound to each server's URL and issuer (so no config replaces another's sign-in),
and a damaged one costs a sign-in, not a crash."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from mcp.shared.auth import OAuthToken

from toolbridge.config._server_auth import ServerAuth
from toolbridge.config.model import ServerConfig
from toolbridge.mcp.oauth import FileTokenStore, StoredLogin
from toolbridge.mcp.oauth._storage import ServerTokenStorage, login_key

pytestmark = pytest.mark.anyio

TOKENS = OAuthToken(access_token="at-1", expires_in=3600, refresh_token="rt-1", scope="read")


async def test_the_file_is_owner_only_even_if_it_was_not(tmp_path: Path) -> None:
    path = tmp_path / "deeper" / "tokens.json"
    store = FileTokenStore(path)
    await store.save("a", StoredLogin(url="https://a.example.com/mcp", tokens=TOKENS))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    path.chmod(0o644)
    await store.save("b", StoredLogin(url="https://b.example.com/mcp"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert set(await store.load_all()) == {"a", "b"}
    assert await store.delete("a")
    assert not await store.delete("a")
    assert set(await store.load_all()) == {"b"}


async def test_a_damaged_file_is_a_lost_sign_in(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    store = FileTokenStore(path)
    assert await store.load("a") is None
    assert "cannot be read" in caplog.text
    await store.save("a", StoredLogin(url="https://a.example.com/mcp", tokens=TOKENS))
    loaded = await store.load("a")
    assert loaded is not None
    assert loaded.tokens == TOKENS


async def test_a_server_whose_url_changed_gets_none_of_the_old_sign_in(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    await store.save("a", StoredLogin(url="https://old.example.com/mcp", tokens=TOKENS))
    moved = ServerTokenStorage(
        ServerConfig(name="a", transport="streamable-http", url="https://new.example.com/mcp"), store
    )
    assert await moved.get_tokens() is None
    assert await moved.get_client_info() is None
    same = ServerTokenStorage(
        ServerConfig(name="a", transport="streamable-http", url="https://old.example.com/mcp"), store
    )
    assert await same.get_tokens() == TOKENS


def _http(name: str, url: str, issuer: str | None = None) -> ServerConfig:
    auth = ServerAuth(issuer=issuer) if issuer else None
    return ServerConfig(name=name, transport="streamable-http", url=url, auth=auth)


async def test_a_name_pointed_elsewhere_keeps_the_first_urls_sign_in(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    store = FileTokenStore(path)
    old, new = _http("a", "https://old.example.com/mcp"), _http("a", "https://new.example.com/mcp")
    await ServerTokenStorage(old, store).set_tokens(TOKENS)
    moved = ServerTokenStorage(new, store)
    assert await moved.get_tokens() is None  # never sent to a server it was not issued for
    other = OAuthToken(access_token="at-2", refresh_token="rt-2")
    await moved.set_tokens(other)

    # Pointed back (or a second config with the old URL): its sign-in is still there, and the new one too.
    assert await ServerTokenStorage(old, store).get_tokens() == TOKENS
    assert await ServerTokenStorage(new, store).get_tokens() == other
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert await ServerTokenStorage(new, store).forget()
    assert await ServerTokenStorage(old, store).get_tokens() == TOKENS


async def test_a_configured_issuer_has_a_sign_in_of_its_own(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    url = "https://a.example.com/mcp"
    await ServerTokenStorage(_http("a", url, "https://one.example.com"), store).set_tokens(TOKENS)
    assert await ServerTokenStorage(_http("a", url, "https://two.example.com"), store).get_tokens() is None
    assert await ServerTokenStorage(_http("a", url), store).get_tokens() is None
    assert await ServerTokenStorage(_http("a", url, "https://one.example.com"), store).get_tokens() == TOKENS


async def test_a_sign_in_kept_under_the_name_alone_is_read_for_the_same_url_and_moved(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    url = "https://a.example.com/mcp"
    await store.save("a", StoredLogin(url=url, tokens=TOKENS))
    assert await ServerTokenStorage(_http("a", "https://b.example.com/mcp"), store).get_tokens() is None
    assert await ServerTokenStorage(_http("a", url, "https://one.example.com"), store).get_tokens() is None

    storage = ServerTokenStorage(_http("a", url), store)
    assert await storage.get_tokens() == TOKENS
    await storage.set_tokens(TOKENS)  # the next save moves it under its new key
    assert set(await store.load_all()) == {login_key(_http("a", url))}
    assert await storage.get_tokens() == TOKENS
