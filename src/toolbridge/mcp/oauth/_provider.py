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
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata, OAuthMetadata, OAuthToken
from pydantic import AnyUrl

from toolbridge._http_client import async_http_client
from toolbridge.config._server_auth import ServerAuth
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
    if auth is not None and auth.grant == "identity_assertion":
        return _identity_assertion(config, storage, auth)
    if auth is not None and auth.grant == "client_credentials":
        assert auth.client_id is not None
        if auth.signs_assertions:
            signed = SignedJWTParameters(
                issuer=auth.client_id,
                subject=auth.client_id,
                signing_key=auth.signing_key(),
                signing_algorithm=auth.signing_algorithm,
            )
            return _PrivateKeyJWT(
                config.url,
                storage,
                client_id=auth.client_id,
                assertion_provider=signed.create_assertion_provider(),
                scope=auth.scope,
                issuer=auth.issuer,
            )
        assert auth.client_secret is not None
        return _ClientCredentials(
            config.url,
            storage,
            secret_sending(auth),
            client_id=auth.client_id,
            client_secret=auth.client_secret,
            token_endpoint_auth_method=auth.token_endpoint_auth_method or "client_secret_basic",
            scope=auth.scope,
            issuer=auth.issuer,
        )
    metadata = OAuthClientMetadata(
        client_name=client_name,
        redirect_uris=[AnyUrl(await _redirect_uri(config, storage))],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=_secret_method(auth.token_endpoint_auth_method)
        if auth and auth.client_secret
        else "none",
        scope=auth.scope if auth else None,
    )
    redirect = _Redirect(config.name, sign_in)
    return _AuthorizationCode(
        config.url,
        metadata,
        storage,
        secret_sending(auth),
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
    _secret_sending: TokenAuthChoice

    def _use_early_refresh(self, storage: ServerTokenStorage, secret_sending: TokenAuthChoice) -> None:
        self._storage = storage
        self._secret_sending = secret_sending
        self.refresh_early()

    def token_auth(self, metadata: OAuthMetadata | None) -> str | None:
        return self._secret_sending(metadata)

    def refresh_margin(self, token: OAuthToken) -> float:
        return _refresh_margin(token)

    def stored_token_expiry(self) -> float | None:
        return self._storage.expires_at


class _AuthorizationCode(_StoredExpiry, OAuthClientProvider):
    def __init__(
        self,
        server_url: str,
        metadata: OAuthClientMetadata,
        storage: ServerTokenStorage,
        secret_sending: TokenAuthChoice,
        **options: Any,
    ):
        super().__init__(server_url, metadata, storage, **options)
        self._use_early_refresh(storage, secret_sending)


class _ClientCredentials(_StoredExpiry, ClientCredentialsOAuthProvider):
    def __init__(
        self, server_url: str, storage: ServerTokenStorage, secret_sending: TokenAuthChoice, **options: Any
    ) -> None:
        super().__init__(server_url, storage, **options)
        self._use_early_refresh(storage, secret_sending)


class _PrivateKeyJWT(_StoredExpiry, PrivateKeyJWTOAuthProvider):
    def __init__(self, server_url: str, storage: ServerTokenStorage, **options: Any) -> None:
        super().__init__(server_url, storage, **options)
        self._use_early_refresh(storage, _as_registered)


TokenAuthChoice = Callable[[OAuthMetadata | None], str | None]
"""(the authorization server's metadata) -> how the client sends its secret; None: as its record says."""


def _as_registered(_metadata: OAuthMetadata | None) -> None:
    return None


def secret_sending(auth: ServerAuth | None) -> TokenAuthChoice:
    """A client registered by hand with a secret sends it as the config says, else as the authorization
    server advertises; a client registered by toolbridge (or without a secret) as its registration says."""
    if auth is None or not (auth.client_id and auth.client_secret):
        return _as_registered
    configured = auth.token_endpoint_auth_method
    return lambda metadata: configured or advertised_secret_method(metadata)


def advertised_secret_method(metadata: OAuthMetadata | None) -> str:
    """How a client with a secret authenticates at the token endpoint: the authorization server's first
    advertised choice of basic and post; basic where it says nothing (RFC 8414's default)."""
    offered = (metadata.token_endpoint_auth_methods_supported if metadata else None) or []
    secret_methods = ("client_secret_basic", "client_secret_post")
    return next((method for method in offered if method in secret_methods), "client_secret_basic")


def _secret_method(configured: str | None) -> str:
    return (
        configured if configured in ("client_secret_basic", "client_secret_post") else "client_secret_basic"
    )


def _identity_assertion(config: ServerConfig, storage: ServerTokenStorage, auth: ServerAuth) -> httpx2.Auth:
    """Enterprise-managed authorization (SEP-990): the person's ID token is exchanged at the company's
    identity provider for an identity assertion (ID-JAG, RFC 8693), which the MCP server's
    authorization server takes for a token (RFC 7523 jwt-bearer)."""
    client_id, client_secret, issuer = auth.client_id, auth.client_secret, auth.issuer
    assert client_id is not None
    assert client_secret is not None
    assert issuer is not None
    assert auth.idp_token_endpoint is not None
    assert auth.idp_client_id is not None
    assert auth.idp_id_token is not None
    endpoint, idp_client, id_token = auth.idp_token_endpoint, auth.idp_client_id, auth.idp_id_token

    async def exchange_id_token(audience: str, resource: str) -> str:
        form = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "subject_token": id_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "audience": audience,
            "resource": resource,
            "client_id": idp_client,
        }
        async with async_http_client(timeout=30) as http:
            response = await http.post(endpoint, data=form)
        if response.status_code != 200:
            raise AuthenticationError(
                f"The identity provider at {endpoint} refused to exchange the ID token for an identity "
                f"assertion (HTTP {response.status_code}: {response.text[:200]}); check idp_client_id and "
                "that idp_id_token is current.",
                server=config.name,
            )
        assertion = response.json().get("access_token")
        if not isinstance(assertion, str):
            raise AuthenticationError(
                f"The identity provider at {endpoint} answered without an access_token.", server=config.name
            )
        return assertion

    method = auth.token_endpoint_auth_method
    assert config.url is not None
    return IdentityAssertionOAuthProvider(
        config.url,
        storage,
        client_id=client_id,
        client_secret=client_secret,
        issuer=issuer,
        assertion_provider=exchange_id_token,
        scope=auth.scope,
        token_endpoint_auth_method="client_secret_post"
        if method == "client_secret_post"
        else "client_secret_basic",
    )
