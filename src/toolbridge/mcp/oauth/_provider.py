"""The SDK's OAuth client (`OAuthClientProvider`) for one server, as the `httpx2.Auth` of its transport.

The SDK does the protocol: protected-resource and authorization-server metadata discovery with the
older fallbacks, dynamic client registration, client ID metadata documents, PKCE, the `resource`
parameter, scopes from `WWW-Authenticate` and `scopes_supported`, step-up on 403 `insufficient_scope`,
refresh, and the client-credentials grant (`ClientCredentialsOAuthProvider`). We add where tokens live,
who does the browser step, and two things it leaves out: a token's expiry is remembered across runs,
and tokens are refreshed a little before they expire rather than after.
"""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from toolbridge.config.model import ServerConfig
from toolbridge.errors import AuthenticationError
from toolbridge.mcp._sdk import OAUTH_FLOW_ERROR, EarlyRefresh, drop_log_record
from toolbridge.mcp.oauth._storage import ServerTokenStorage
from toolbridge.mcp.oauth._tokens import TokenStore

__all__ = ["REFRESH_MARGIN", "SignIn", "oauth_for_server", "uses_oauth"]

REFRESH_MARGIN = 60.0
"""Seconds before its expiry at which an access token is refreshed, so no request meets a stale one."""

SignIn = Callable[[str, str], Awaitable[AuthorizationCodeResult]]
"""(server name, authorization URL) -> the code and state the authorization server redirected back with."""


# No traceback from the SDK for a failed OAuth flow: the failure reaches the person once, as an
# `AuthenticationError` that says what to do (see `mcp._failures`).
drop_log_record(OAUTH_FLOW_ERROR)


def uses_oauth(config: ServerConfig) -> bool:
    """HTTP servers sign in with OAuth when asked to (a 401), unless the config sends its own credentials."""
    if config.transport == "stdio" or config.url is None:
        return False
    return not any(name.lower() == "authorization" for name in config.headers)


async def oauth_for_server(
    config: ServerConfig, store: TokenStore, sign_in: SignIn | None, client_name: str
) -> httpx2.Auth:
    """The auth of `config`'s transport: its tokens from `store`, `sign_in` for the browser step."""
    assert config.url is not None
    storage = ServerTokenStorage(config, store)
    auth = config.auth
    if auth is not None and auth.grant == "client_credentials":
        assert auth.client_id is not None
        assert auth.client_secret is not None
        return _ClientCredentials(
            config.url,
            storage,
            client_id=auth.client_id,
            client_secret=auth.client_secret,
            token_endpoint_auth_method="client_secret_post",
            scope=auth.scope,
            issuer=auth.issuer,
        )
    metadata = OAuthClientMetadata(
        client_name=client_name,
        redirect_uris=[AnyUrl(await _redirect_uri(config, storage))],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post" if auth and auth.client_secret else "none",
        scope=auth.scope if auth else None,
    )
    redirect = _Redirect(config.name, sign_in)
    return _AuthorizationCode(
        config.url,
        metadata,
        storage,
        redirect_handler=redirect.remember,
        callback_handler=redirect.sign_in,
        client_metadata_url=auth.client_metadata_url if auth else None,
    )


class _Redirect:
    """The SDK asks for the browser step in two halves (send the person there, await the redirect);
    a `SignIn` does both, given the URL."""

    def __init__(self, server: str, sign_in: SignIn | None) -> None:
        self._server = server
        self._sign_in = sign_in
        self._url: str | None = None

    async def remember(self, url: str) -> None:
        if self._sign_in is None:
            raise AuthenticationError(
                f"Server {self._server!r} needs you to sign in (OAuth), and nobody can be asked here. "
                f"Run `toolbridge auth login {self._server}` first, or use it from `toolbridge chat`.",
                server=self._server,
            )
        self._url = url

    async def sign_in(self) -> AuthorizationCodeResult:
        assert self._sign_in is not None
        assert self._url is not None
        return await self._sign_in(self._server, self._url)


async def _redirect_uri(config: ServerConfig, storage: ServerTokenStorage) -> str:
    """The configured redirect URI, else the one this client registered with, else a new loopback one."""
    if config.auth is not None and config.auth.redirect_uri is not None:
        return config.auth.redirect_uri
    stored = await storage.login()
    if stored is not None and stored.client is not None and stored.client.redirect_uris:
        return str(stored.client.redirect_uris[0])
    return f"http://127.0.0.1:{_free_port()}/callback"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _refresh_margin(token: OAuthToken) -> float:
    """How early to refresh: `REFRESH_MARGIN`, or half the lifetime of a token that lives less than twice that."""
    return REFRESH_MARGIN if token.expires_in is None else min(REFRESH_MARGIN, int(token.expires_in) / 2)


class _StoredExpiry(EarlyRefresh):
    """Refresh early, and know a stored token's expiry after a restart (the SDK reloads stored tokens
    without it, and would treat an expired one as valid until a 401, then sign in again from scratch
    instead of refreshing)."""

    _storage: ServerTokenStorage

    def _use_early_refresh(self, storage: ServerTokenStorage) -> None:
        self._storage = storage
        self.refresh_early()

    def refresh_margin(self, token: OAuthToken) -> float:
        return _refresh_margin(token)

    def stored_token_expiry(self) -> float | None:
        return self._storage.expires_at


class _AuthorizationCode(_StoredExpiry, OAuthClientProvider):
    def __init__(
        self, server_url: str, metadata: OAuthClientMetadata, storage: ServerTokenStorage, **options: Any
    ):
        super().__init__(server_url, metadata, storage, **options)
        self._use_early_refresh(storage)


class _ClientCredentials(_StoredExpiry, ClientCredentialsOAuthProvider):
    def __init__(self, server_url: str, storage: ServerTokenStorage, **options: Any) -> None:
        super().__init__(server_url, storage, **options)
        self._use_early_refresh(storage)
