"""The SDK's `TokenStorage` for one server, over a `TokenStore` shared by all servers."""

from __future__ import annotations

import json
import time

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from toolbridge.config.model import ServerConfig
from toolbridge.mcp.oauth._tokens import StoredLogin, TokenStore

__all__ = ["ServerTokenStorage", "login_key"]


def login_key(config: ServerConfig) -> str:
    """Where `config`'s sign-in is kept in a `TokenStore`: its name, URL and configured issuer, so a
    second config with the same name, or a name pointed at another URL, keeps a sign-in of its own
    instead of replacing the other's."""
    assert config.url is not None
    issuer = config.auth.issuer if config.auth is not None else None
    return json.dumps([config.name, config.url, *([issuer] if issuer else [])])


class ServerTokenStorage:
    """Tokens and client registration of one server; nothing stored for another URL or issuer is ever
    returned, and saving never replaces what another URL or issuer has stored.

    Sign-ins kept the older way, under the server's name alone, are still read when they were made for
    the same URL (and no issuer is configured), and move to `login_key` on their next save.
    A client registered by hand (`auth.client_id` in the config) is the client, whatever is stored.
    """

    def __init__(self, config: ServerConfig, store: TokenStore) -> None:
        assert config.url is not None
        self._server = config.name
        self._url = config.url
        self._issuer = config.auth.issuer if config.auth is not None else None
        self._key = login_key(config)
        self._store = store
        self._preregistered = _preregistered_client(config)
        self.expires_at: float | None = None
        """When the loaded access token expires; the SDK keeps this in memory only."""

    async def login(self) -> StoredLogin | None:
        stored = await self._store.load(self._key)
        if stored is not None:
            return stored if stored.url == self._url and stored.issuer == self._issuer else None
        return await self._older_login()

    async def save(self, login: StoredLogin) -> None:
        """Keep `login` as this server's (bound to its URL and issuer)."""
        await self._store.save(self._key, login.model_copy(update={"url": self._url, "issuer": self._issuer}))
        if await self._older_login() is not None:
            await self._store.delete(self._server)

    async def forget(self) -> bool:
        """Remove this server's sign-in; False if there was none."""
        older = await self._older_login() is not None and await self._store.delete(self._server)
        return await self._store.delete(self._key) or older

    async def forget_tokens(self) -> None:
        """Remove the tokens, so the next use signs in again; the client registration stays."""
        stored = await self.login()
        if stored is not None:
            await self.save(stored.model_copy(update={"tokens": None, "expires_at": None}))

    async def _older_login(self) -> StoredLogin | None:
        """A sign-in kept under the name alone (before `login_key`), when it is this server's."""
        if self._issuer is not None:
            return None  # which issuer it came from was not kept: sign in again
        stored = await self._store.load(self._server)
        return stored if stored is not None and stored.url == self._url and stored.issuer is None else None

    async def get_tokens(self) -> OAuthToken | None:
        stored = await self.login()
        self.expires_at = stored.expires_at if stored is not None else None
        return stored.tokens if stored is not None else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = None if tokens.expires_in is None else time.time() + tokens.expires_in
        self.expires_at = expires_at
        stored = await self.login() or StoredLogin(url=self._url)
        await self.save(stored.model_copy(update={"tokens": tokens, "expires_at": expires_at}))

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._preregistered is not None:
            return self._preregistered
        stored = await self.login()
        return stored.client if stored is not None else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self._preregistered is not None:
            return
        stored = await self.login() or StoredLogin(url=self._url)
        await self.save(stored.model_copy(update={"client": client_info}))


def _preregistered_client(config: ServerConfig) -> OAuthClientInformationFull | None:
    auth = config.auth
    if auth is None or auth.client_id is None:
        return None
    return OAuthClientInformationFull(
        client_id=auth.client_id,
        client_secret=auth.client_secret,
        redirect_uris=[auth.redirect_uri] if auth.redirect_uri else None,
        # How a secret is sent is chosen from the authorization server's metadata (`_provider.py`).
        token_endpoint_auth_method="client_secret_basic" if auth.client_secret else "none",
        scope=auth.scope,
    )
