"""The SDK's `TokenStorage` for one server, over a `TokenStore` shared by all servers."""

from __future__ import annotations

import time

from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from toolbridge.config.model import ServerConfig
from toolbridge.mcp.oauth._tokens import StoredLogin, TokenStore

__all__ = ["ServerTokenStorage"]


class ServerTokenStorage:
    """Tokens and client registration of one server; nothing stored for another URL is ever returned.

    A client registered by hand (`auth.client_id` in the config) is the client, whatever is stored.
    """

    def __init__(self, config: ServerConfig, store: TokenStore) -> None:
        assert config.url is not None
        self._server = config.name
        self._url = config.url
        self._store = store
        self._preregistered = _preregistered_client(config)
        self.expires_at: float | None = None
        """When the loaded access token expires; the SDK keeps this in memory only."""

    async def login(self) -> StoredLogin | None:
        stored = await self._store.load(self._server)
        return stored if stored is not None and stored.url == self._url else None

    async def get_tokens(self) -> OAuthToken | None:
        stored = await self.login()
        self.expires_at = stored.expires_at if stored is not None else None
        return stored.tokens if stored is not None else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = None if tokens.expires_in is None else time.time() + tokens.expires_in
        self.expires_at = expires_at
        stored = await self.login() or StoredLogin(url=self._url)
        await self._store.save(
            self._server, stored.model_copy(update={"tokens": tokens, "expires_at": expires_at})
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._preregistered is not None:
            return self._preregistered
        stored = await self.login()
        return stored.client if stored is not None else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self._preregistered is not None:
            return
        stored = await self.login() or StoredLogin(url=self._url)
        await self._store.save(self._server, stored.model_copy(update={"client": client_info}))


def _preregistered_client(config: ServerConfig) -> OAuthClientInformationFull | None:
    auth = config.auth
    if auth is None or auth.client_id is None:
        return None
    return OAuthClientInformationFull(
        client_id=auth.client_id,
        client_secret=auth.client_secret,
        redirect_uris=[auth.redirect_uri] if auth.redirect_uri else None,
        token_endpoint_auth_method="client_secret_post" if auth.client_secret else "none",
        scope=auth.scope,
    )
