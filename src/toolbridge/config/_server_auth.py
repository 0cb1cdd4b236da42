"""A server's `auth` entry: how toolbridge signs in to a remote server with OAuth 2.1.

Without it an HTTP server that answers 401 still gets the authorization-code flow with dynamic client
registration; `auth` is for what discovery cannot tell: a client registered by hand, the
client-credentials grant, a client ID metadata document, the scopes to ask for.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from toolbridge.config._errors import describe
from toolbridge.errors import ConfigError

__all__ = ["ServerAuth", "parse_server_auth"]

Grant = Literal["authorization_code", "client_credentials"]

_AUTH_KEYS = ("client_id", "client_secret", "grant", "scope", "redirect_uri", "client_metadata_url", "issuer")


class ServerAuth(BaseModel):
    """OAuth settings of one server; every field is optional (discovery fills in the rest)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    client_id: str | None = None
    """A client registered by hand at the authorization server (no dynamic registration then)."""
    client_secret: str | None = None
    grant: Grant = "authorization_code"
    """`client_credentials` signs in as the client itself, with no person (machine to machine)."""
    scope: str | None = None
    """Space-separated scopes to ask for; by default those the server names (`WWW-Authenticate`,
    then `scopes_supported`)."""
    redirect_uri: str | None = None
    """Where the authorization server sends the browser back; must be a loopback `http://127.0.0.1:PORT/...`
    address registered for `client_id`. Chosen by toolbridge when the client registers itself."""
    client_metadata_url: str | None = None
    """An HTTPS URL whose document describes this client (a client ID metadata document), used as the
    client ID by authorization servers that support it."""
    issuer: str | None = None
    """The authorization server the client credentials belong to (client credentials are sent nowhere else)."""


def parse_server_auth(value: Any, fail: Callable[[str, str], ConfigError]) -> ServerAuth:
    """The `auth` entry of a server; `fail(message, key)` builds the error naming the key."""
    if not isinstance(value, Mapping):
        raise fail(
            f'expected an object like {{"client_id": "...", "client_secret": "..."}}, got {describe(value)}',
            "auth",
        )
    for key, item in value.items():
        if key not in _AUTH_KEYS:
            close = difflib.get_close_matches(key, _AUTH_KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(_AUTH_KEYS)}"
            raise fail(f"unknown key; {hint}", f"auth.{key}")
        if not isinstance(item, str) or not item.strip():
            raise fail(f"expected a non-empty string, got {describe(item)}", f"auth.{key}")
    grant = value.get("grant", "authorization_code")
    if grant not in ("authorization_code", "client_credentials"):
        raise fail(
            f"unknown grant {grant!r}; expected 'authorization_code' or 'client_credentials'", "auth.grant"
        )
    if grant == "client_credentials" and not (value.get("client_id") and value.get("client_secret")):
        raise fail(
            "the client_credentials grant needs 'client_id' and 'client_secret' (the client's own credentials)",
            "auth.grant",
        )
    if "client_secret" in value and "client_id" not in value:
        raise fail(
            "'client_secret' without 'client_id'; give the client ID it belongs to", "auth.client_secret"
        )
    redirect = value.get("redirect_uri")
    if redirect is not None and not redirect.startswith(
        ("http://127.0.0.1:", "http://localhost:", "http://[::1]:")
    ):
        raise fail(
            f"expected a loopback address with a port, like http://127.0.0.1:8976/callback, got {redirect!r}",
            "auth.redirect_uri",
        )
    url = value.get("client_metadata_url")
    if url is not None and not url.startswith("https://"):
        raise fail(
            f"expected an https:// URL (a client ID metadata document), got {url!r}",
            "auth.client_metadata_url",
        )
    return ServerAuth(**value)
