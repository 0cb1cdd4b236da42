"""A server's `auth` entry: how toolbridge signs in to a remote server with OAuth 2.1.

Without it an HTTP server that answers 401 still gets the authorization-code flow with dynamic client
registration; `auth` is for what discovery cannot tell: a client registered by hand, the
client-credentials grant, a client ID metadata document, the scopes to ask for.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from toolbridge.config._errors import describe
from toolbridge.errors import ConfigError

__all__ = ["ServerAuth", "TokenEndpointAuthMethod", "parse_server_auth"]

Grant = Literal["authorization_code", "client_credentials", "identity_assertion"]
TokenEndpointAuthMethod = Literal["client_secret_basic", "client_secret_post", "private_key_jwt", "none"]

_GRANTS = ("authorization_code", "client_credentials", "identity_assertion")
_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt", "none")
_IDP_KEYS = ("idp_token_endpoint", "idp_client_id", "idp_id_token")
_AUTH_KEYS = (
    "client_id", "client_secret", "grant", "scope", "redirect_uri", "client_metadata_url", "issuer",
    "token_endpoint_auth_method", "private_key", "private_key_file", "signing_algorithm", *_IDP_KEYS,
)  # fmt: skip


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
    token_endpoint_auth_method: TokenEndpointAuthMethod | None = None
    """How the client proves itself at the token endpoint; by default the first of `client_secret_basic`
    and `client_secret_post` the authorization server advertises (basic where it says nothing), and
    `private_key_jwt` when a private key is given."""
    private_key: str | None = None
    """PEM private key that signs the client's JWT assertions (`private_key_jwt`), usually `${VAR}`."""
    private_key_file: str | None = None
    """The same, read from a file (kept owner-only)."""
    signing_algorithm: str = "RS256"
    """The JWT algorithm of the private key (RS256, ES256, ...)."""
    idp_token_endpoint: str | None = None
    """Enterprise-managed authorization (`"grant": "identity_assertion"`): the company identity provider's
    token endpoint, where the person's ID token is exchanged for an identity assertion (ID-JAG)."""
    idp_client_id: str | None = None
    """This client's ID at the identity provider."""
    idp_id_token: str | None = None
    """The person's ID token from the identity provider (single sign-on), usually `${VAR}`."""

    @property
    def signs_assertions(self) -> bool:
        return self.private_key is not None or self.private_key_file is not None

    def signing_key(self) -> str:
        """The PEM key that signs assertions (from `private_key` or `private_key_file`)."""
        if self.private_key is not None:
            return self.private_key
        assert self.private_key_file is not None
        return Path(self.private_key_file).expanduser().read_text()


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
    if grant not in _GRANTS:
        raise fail(f"unknown grant {grant!r}; expected one of {', '.join(map(repr, _GRANTS))}", "auth.grant")
    method = value.get("token_endpoint_auth_method")
    if method is not None and method not in _METHODS:
        raise fail(
            f"unknown method {method!r}; expected one of {', '.join(_METHODS)}",
            "auth.token_endpoint_auth_method",
        )
    signs = "private_key" in value or "private_key_file" in value
    if "private_key" in value and "private_key_file" in value:
        raise fail("give 'private_key' or 'private_key_file', not both", "auth.private_key")
    if method == "private_key_jwt" and not signs:
        raise fail(
            "private_key_jwt needs the key that signs: 'private_key' or 'private_key_file'",
            "auth.private_key",
        )
    if signs and grant != "client_credentials":
        raise fail(
            'a private key signs client-credentials sign-ins; add "grant": "client_credentials"', "auth.grant"
        )
    if grant == "client_credentials" and not (
        value.get("client_id") and (value.get("client_secret") or signs)
    ):
        raise fail(
            "the client_credentials grant needs 'client_id' and 'client_secret' or a private key "
            "('private_key' / 'private_key_file'): the client's own credentials",
            "auth.grant",
        )
    if grant == "identity_assertion":
        missing = [key for key in ("client_id", "client_secret", "issuer", *_IDP_KEYS) if key not in value]
        if missing:
            raise fail(
                f"the identity_assertion grant (enterprise-managed authorization) needs {', '.join(missing)}",
                "auth.grant",
            )
    if grant != "identity_assertion" and (extra := [key for key in _IDP_KEYS if key in value]):
        raise fail(f'{", ".join(extra)} belong to "grant": "identity_assertion"', f"auth.{extra[0]}")
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
