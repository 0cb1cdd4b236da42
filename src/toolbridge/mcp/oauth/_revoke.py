"""Signing out: revoking a server's tokens at its authorization server (RFC 7009), then forgetting them.

The SDK signs in but has no revocation, so this finds the authorization server the way it does (the
configured `auth.issuer`, else the protected-resource metadata, else the server's own origin), reads its
metadata with the SDK's helpers, and, when it advertises a `revocation_endpoint`, revokes the refresh
token first (revoking it may end the access tokens issued from it, but need not), then the access
token. The client authenticates as it does at the token endpoint: `client_secret_basic`,
`client_secret_post`, or by `client_id` alone for a public client.

The local tokens are removed whatever happens at the server; what failed there is reported, never raised.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx2
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
    handle_auth_metadata_response,
    handle_protected_resource_response,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken

from toolbridge.config.model import ServerConfig
from toolbridge.mcp.oauth._provider import secret_sending
from toolbridge.mcp.oauth._storage import ServerTokenStorage
from toolbridge.mcp.oauth._tokens import TokenStore

__all__ = ["SignOut", "sign_out"]

REVOCATION_TIMEOUT = 10.0
"""Seconds for each request to the authorization server: a sign-out must not hang on a dead one."""


@dataclass
class SignOut:
    """What `sign_out` did."""

    removed: bool = False
    """Tokens or a client registration were stored and are now forgotten."""
    revocation_endpoint: str | None = None
    """Where the tokens were sent for revocation; None when none was found (or nothing to revoke)."""
    revoked: list[str] = field(default_factory=list)
    """The kinds of token the server revoked: "refresh_token", "access_token"."""
    failures: list[str] = field(default_factory=list)
    """What went wrong at the server, one sentence each (the local tokens are removed regardless)."""


async def sign_out(
    config: ServerConfig, store: TokenStore, *, client: httpx2.AsyncClient | None = None
) -> SignOut:
    """Revoke `config`'s stored tokens where its authorization server allows it, then remove them."""
    storage = ServerTokenStorage(config, store)
    outcome = SignOut()
    tokens = await storage.get_tokens()  # None when stored for another URL: never sent elsewhere
    if tokens is not None:
        registered = await storage.get_client_info()
        owned = client is None
        http = client or httpx2.AsyncClient(timeout=REVOCATION_TIMEOUT)
        try:
            await _revoke(config, tokens, registered, http, outcome)
        finally:
            if owned:
                await http.aclose()
    outcome.removed = await storage.forget()
    return outcome


async def _revoke(
    config: ServerConfig,
    tokens: OAuthToken,
    registered: OAuthClientInformationFull | None,
    http: httpx2.AsyncClient,
    outcome: SignOut,
) -> None:
    try:
        metadata = await _authorization_server_metadata(config, http)
    except httpx2.HTTPError as exc:
        outcome.failures.append(f"its authorization server could not be reached ({_describe(exc)})")
        return
    if metadata is None or metadata.revocation_endpoint is None:
        return
    if registered is None or registered.client_id is None:
        outcome.failures.append("no client registration is stored, so the tokens cannot be revoked")
        return
    endpoint = str(metadata.revocation_endpoint)
    outcome.revocation_endpoint = endpoint
    # A client registered by hand sends its secret as it does to the token endpoint (`_provider`).
    if (chosen := secret_sending(config.auth)(metadata)) is not None:
        registered = registered.model_copy(update={"token_endpoint_auth_method": chosen})
    method = _auth_method(registered, metadata)
    for kind, token in (("refresh_token", tokens.refresh_token), ("access_token", tokens.access_token)):
        if not token:
            continue
        failure = await _revoke_one(http, endpoint, token, kind, registered, method)
        if failure is None:
            outcome.revoked.append(kind)
        else:
            outcome.failures.append(failure)


async def _revoke_one(
    http: httpx2.AsyncClient,
    endpoint: str,
    token: str,
    kind: str,
    registered: OAuthClientInformationFull,
    method: str,
) -> str | None:
    """None when revoked; else what went wrong, without the token."""
    assert registered.client_id is not None
    # client_id always goes in the form too: RFC 7009 servers find the client by it even with Basic.
    form = {"token": token, "token_type_hint": kind, "client_id": registered.client_id}
    headers: dict[str, str] = {}
    if method == "client_secret_basic" and registered.client_secret:
        headers["Authorization"] = _basic(registered.client_id, registered.client_secret)
    elif method == "client_secret_post" and registered.client_secret:
        form["client_secret"] = registered.client_secret
    what = kind.replace("_", " ")
    try:
        response = await http.post(endpoint, data=form, headers=headers)
    except httpx2.HTTPError as exc:
        return f"revoking the {what} failed: {_describe(exc)}"
    if response.status_code == 200:
        return None
    return f"revoking the {what} failed: {endpoint} answered {response.status_code} {_error_of(response)}".rstrip()


async def _authorization_server_metadata(
    config: ServerConfig, http: httpx2.AsyncClient
) -> OAuthMetadata | None:
    assert config.url is not None
    issuer = config.auth.issuer if config.auth is not None else None
    if issuer is None:
        for url in build_protected_resource_metadata_discovery_urls(None, config.url):
            resource = await handle_protected_resource_response(await http.get(url))
            if resource is not None and resource.authorization_servers:
                issuer = str(resource.authorization_servers[0])
                break
    for url in build_oauth_authorization_server_metadata_discovery_urls(issuer, config.url):
        go_on, metadata = await handle_auth_metadata_response(await http.get(url))
        if metadata is not None or not go_on:
            return metadata
    return None


def _auth_method(registered: OAuthClientInformationFull, metadata: OAuthMetadata) -> str:
    """The client's token-endpoint method, unless the revocation endpoint takes only another secret one."""
    method = registered.token_endpoint_auth_method or (
        "client_secret_post" if registered.client_secret else "none"
    )
    supported = metadata.revocation_endpoint_auth_methods_supported
    if method == "none" or not supported or method in supported:
        return method
    return next((m for m in ("client_secret_basic", "client_secret_post") if m in supported), method)


def _basic(client_id: str, secret: str) -> str:
    # RFC 6749 2.3.1: both are form-urlencoded before they are joined and base64-encoded.
    credentials = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(credentials.encode()).decode()


def _describe(exc: httpx2.HTTPError) -> str:
    return str(exc) or type(exc).__name__


def _error_of(response: httpx2.Response) -> str:
    """The OAuth error code and description the server gave, if any (bodies of other kinds are left out)."""
    try:
        body = response.json()
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    parts = [str(body[key]) for key in ("error", "error_description") if body.get(key)]
    return f"({': '.join(parts)})" if parts else ""
