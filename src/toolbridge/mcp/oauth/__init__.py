"""OAuth 2.1 for remote MCP servers, through the SDK's OAuth client.

- `OAuth`: where sign-ins are kept and who does the browser step; `ClientFeatures(oauth=...)` gives it
  to every session. By default tokens are read from the token file and nobody is asked, so a server
  that needs a sign-in fails with `AuthenticationError` until `toolbridge auth login` (or a `sign_in`)
  has been through the flow.
- `SignIn`: the browser step, `(server, authorization_url) -> AuthorizationCodeResult(code, state)`.
  `loopback_sign_in(show)` is the usual one: a callback listener on 127.0.0.1 and `show` to open a
  browser or print the URL. Tests and other applications pass their own.
- `TokenStore` / `FileTokenStore` / `StoredLogin`: where tokens and client registrations live, each
  under `login_key(config)` (the server's name, URL and configured issuer); `ServerTokenStorage` is one
  server's sign-in in such a store.
- `sign_out(config, store) -> SignOut`: revoke a server's tokens (RFC 7009, where its authorization
  server offers it), then forget them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcp.shared.auth import AuthorizationCodeResult

from toolbridge.errors import AuthenticationError
from toolbridge.mcp.oauth._loopback import ShowUrl, loopback_sign_in
from toolbridge.mcp.oauth._provider import REFRESH_MARGIN, SignIn, oauth_for_server, uses_oauth
from toolbridge.mcp.oauth._revoke import SignOut, sign_out
from toolbridge.mcp.oauth._storage import ServerTokenStorage, login_key
from toolbridge.mcp.oauth._tokens import FileTokenStore, StoredLogin, TokenStore, default_token_file

__all__ = [
    "REFRESH_MARGIN",
    "AuthenticationError",
    "AuthorizationCodeResult",
    "FileTokenStore",
    "OAuth",
    "ServerTokenStorage",
    "ShowUrl",
    "SignIn",
    "SignOut",
    "StoredLogin",
    "TokenStore",
    "default_token_file",
    "login_key",
    "loopback_sign_in",
    "oauth_for_server",
    "sign_out",
    "uses_oauth",
]


@dataclass(frozen=True)
class OAuth:
    tokens: TokenStore = field(default_factory=FileTokenStore)
    """Where each server's tokens and client registration are kept."""
    sign_in: SignIn | None = None
    """The browser step; None: a server that needs a new sign-in fails with `AuthenticationError`."""
    client_name: str = "toolbridge"
    """The name the client registers under (shown by the authorization server's consent page)."""
