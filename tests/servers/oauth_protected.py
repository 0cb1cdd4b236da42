"""An MCP server behind OAuth 2.1, with its own authorization server, built from the SDK's server-side
auth pieces (`mcp.server.auth`): metadata discovery, dynamic client registration, authorization with
PKCE, token and refresh endpoints, token revocation (RFC 7009: a revoked access token is refused from
then on), bearer checks with the token's audience (RFC 8707 `resource`).

The authorization step approves at once (no person): `/authorize` redirects straight to the client's
redirect URI with a code, so a test can follow it headless or through a real browser step.

Added here, where the SDK has no server side:
- step-up: calling `admin_report` without the `mcp:admin` scope answers 403 `insufficient_scope` naming
  the scopes needed;
- the client-credentials grant at `/token` for pre-registered clients (`--client ID:SECRET`);
- `GET /test/events`: what the authorization server saw (grants, `resource`, scopes, PKCE, revocations),
  for asserts;
- `--revocation-fails`: `/revoke` answers 503, as an authorization server that is down would;
- `--advertise-basic-first`: the metadata lists `client_secret_basic` first, and a client registering
  itself is made a confidential one that sends its secret with `client_secret_post` (as authorization
  servers that mint every client a secret do).

Access tokens are HS256 JWTs signed with `--secret`, so two of these servers given the same secret accept
each other's tokens as genuine, and only the audience check (`validate_token_resource`) tells them apart.

Run: python tests/servers/oauth_protected.py --port N [--token-ttl S] [--client ID:SECRET[:REDIRECT]]
"""

from __future__ import annotations

import argparse
import base64
import json
import secrets
import time
from typing import Any
from urllib.parse import parse_qs

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import jwt
from _cli import add_listening_options, serve_http
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import InvalidRedirectUriError, OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl, AnyUrl
from starlette.types import Message, Receive, Scope, Send

SCOPES = ["mcp:read", "mcp:admin"]
BASE_SCOPE = "mcp:read"
ADMIN_SCOPE = "mcp:admin"

events: list[dict[str, Any]] = []


class Provider:
    """An in-memory authorization server that approves every authorization request."""

    def __init__(self, secret: str, issuer: str, token_ttl: int) -> None:
        self.secret = secret
        self.issuer = issuer
        self.token_ttl = token_ttl
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.revoked_access_tokens: set[str] = set()
        self.accept_metadata_documents = False

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        if (
            self.accept_metadata_documents
            and client_id.startswith("https://")
            and client_id not in self.clients
        ):
            # A real server would fetch the document at the URL; this one trusts it for loopback redirects.
            events.append({"event": "metadata_document", "client_id": client_id})
            self.clients[client_id] = _MetadataDocumentClient(
                client_id=client_id, token_endpoint_auth_method="none", scope=" ".join(SCOPES)
            )
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        # An authorization server may widen what it registers (RFC 7591 3.2.1): every scope, so a
        # client registered for mcp:read can step up to mcp:admin later.
        self.clients[client_info.client_id] = client_info.model_copy(update={"scope": " ".join(SCOPES)})
        events.append({"event": "register", "client_id": client_info.client_id})

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [BASE_SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        events.append(
            {
                "event": "authorize",
                "client_id": client.client_id,
                "scopes": params.scopes,
                "resource": params.resource,
                "pkce": bool(params.code_challenge),
            }
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        events.append(
            {"event": "token", "grant": "authorization_code", "resource": authorization_code.resource}
        )
        return self.issue(client.client_id or "", authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh_tokens.pop(refresh_token.token, None)
        events.append({"event": "token", "grant": "refresh_token", "resource": refresh_token.resource})
        return self.issue(client.client_id or "", scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        if token in self.revoked_access_tokens:
            return None
        try:
            claims = jwt.decode(token, self.secret, algorithms=["HS256"], options={"verify_aud": False})
        except jwt.InvalidTokenError:
            return None
        return AccessToken(
            token=token,
            client_id=claims["client_id"],
            scopes=claims["scope"].split(),
            expires_at=claims["exp"],
            resource=claims.get("aud"),
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        kind = "refresh_token" if isinstance(token, RefreshToken) else "access_token"
        events.append({"event": "revoke", "token_type": kind, "client_id": token.client_id})
        self.refresh_tokens.pop(token.token, None)
        if isinstance(token, AccessToken):
            self.revoked_access_tokens.add(token.token)

    def issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        now = int(time.time())
        claims = {"client_id": client_id, "scope": " ".join(scopes), "exp": now + self.token_ttl, "iat": now}
        claims["jti"] = secrets.token_hex(8)
        if resource is not None:
            claims["aud"] = resource
        access = jwt.encode(claims, self.secret, algorithm="HS256")
        refresh = secrets.token_urlsafe(24)
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_ttl,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )


class _MetadataDocumentClient(OAuthClientInformationFull):
    """A client known by its metadata document URL, redirecting to any loopback address (RFC 8252)."""

    def validate_redirect_uri(self, redirect_uri: AnyUrl | None) -> AnyUrl:
        if redirect_uri is None or redirect_uri.host != "127.0.0.1":
            raise InvalidRedirectUriError(f"Redirect URI '{redirect_uri}' is not a loopback address")
        return redirect_uri


def main() -> None:
    parser = argparse.ArgumentParser(description="toolbridge test MCP server behind OAuth")
    parser.add_argument("--transport", choices=["http", "sse"], default="http")
    add_listening_options(parser)
    parser.add_argument("--token-ttl", type=int, default=3600, help="access token lifetime in seconds")
    parser.add_argument("--secret", default="toolbridge-test-signing-secret")
    parser.add_argument(
        "--metadata-documents", action="store_true", help="accept client ID metadata documents"
    )
    parser.add_argument(
        "--advertise-resource", help="protected-resource metadata names this resource instead"
    )
    parser.add_argument(
        "--legacy", action="store_true", help="no protected-resource metadata (2025-03-26 servers)"
    )
    parser.add_argument(
        "--client", action="append", default=[], help="pre-registered ID:SECRET[:REDIRECT_URI]"
    )
    parser.add_argument(
        "--basic-clients", action="store_true", help="pre-registered clients send their secret with Basic"
    )
    parser.add_argument("--revocation-fails", action="store_true", help="/revoke answers 503")
    parser.add_argument(
        "--advertise-basic-first",
        action="store_true",
        help="the metadata lists client_secret_basic first; registered clients get a secret sent by post",
    )
    options = parser.parse_args()

    origin = f"http://127.0.0.1:{options.port}"
    resource = f"{origin}/mcp" if options.transport == "http" else f"{origin}/sse"
    provider = Provider(options.secret, origin, options.token_ttl)
    provider.accept_metadata_documents = options.metadata_documents
    for entry in options.client:
        client_id, client_secret, *redirect = entry.split(":", 2)
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id,
            client_secret=client_secret,
            redirect_uris=redirect or None,
            grant_types=["authorization_code", "refresh_token", "client_credentials"],
            token_endpoint_auth_method="client_secret_basic"
            if options.basic_clients
            else "client_secret_post",
            scope=" ".join(SCOPES),
        )

    server = MCPServer(
        "oauth-protected",
        log_level="WARNING",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=origin,  # type: ignore[arg-type]
            resource_server_url=resource,  # type: ignore[arg-type]
            required_scopes=[BASE_SCOPE],
            validate_token_resource=not options.legacy,  # 2025-03-26 servers knew no audience
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=SCOPES, default_scopes=[BASE_SCOPE]
            ),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @server.tool()
    def whoami() -> str:
        """The client and the scopes of the token this call was made with."""
        token = get_access_token()
        assert token is not None
        return f"client {token.client_id} with scopes {' '.join(sorted(token.scopes))}"

    met = anyio.Event()
    arrived: list[str] = []

    @server.tool()
    async def rendezvous(tag: str, peers: int = 2, wait_ms: int = 5000) -> str:
        """Wait (up to `wait_ms`) until `peers` calls are running: calls one after another never meet."""
        arrived.append(tag)
        if len(arrived) >= peers:
            met.set()
        with anyio.move_on_after(wait_ms / 1000):
            await met.wait()
        return f"{tag} met its peers" if met.is_set() else f"{tag} waited alone"

    @server.tool()
    def admin_report() -> str:
        """Needs the mcp:admin scope (a step-up from mcp:read)."""
        return "admin report: all systems nominal"

    mcp_app = server.streamable_http_app() if options.transport == "http" else server.sse_app()
    app = _TestAdditions(mcp_app, provider, resource, options)
    assert server.settings.auth is not None
    app.issuer_url = server.settings.auth.issuer_url  # spelt as the SDK's own metadata spells it
    serve_http(app, options)


class _TestAdditions:
    """ASGI wrapper adding step-up, the client-credentials grant and `/test/events` to the SDK's app."""

    def __init__(self, app: Any, provider: Provider, resource: str, options: argparse.Namespace) -> None:
        self.app = app
        self.provider = provider
        self.resource = resource
        self.options = options
        self.issuer_url: AnyHttpUrl = AnyHttpUrl(provider.issuer)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope["method"]
        if path == "/test/events":
            await _respond(send, 200, json.dumps(events).encode())
            return
        if path.startswith("/.well-known/oauth-protected-resource"):
            if self.options.legacy:
                events.append({"event": "resource_metadata_missing", "path": path})
                await _respond(send, 404, b'{"error": "not found"}')
                return
            if self.options.advertise_resource:
                metadata = {
                    "resource": self.options.advertise_resource,
                    "authorization_servers": [self.provider.issuer],
                }
                await _respond(send, 200, json.dumps(metadata).encode())
                return
        if path == "/.well-known/oauth-authorization-server" and (
            self.options.metadata_documents or self.options.advertise_basic_first
        ):
            metadata = build_metadata(
                self.issuer_url,
                None,
                ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES),
                RevocationOptions(enabled=True),
            )
            metadata.client_id_metadata_document_supported = self.options.metadata_documents or None
            if self.options.advertise_basic_first:
                metadata.token_endpoint_auth_methods_supported = ["client_secret_basic", "client_secret_post"]
            await _respond(send, 200, metadata.model_dump_json(exclude_none=True).encode())
            return
        if path == "/revoke" and self.options.revocation_fails:
            events.append({"event": "revoke_refused"})
            await _respond(send, 503, b'{"error": "temporarily_unavailable"}')
            return
        if self.options.legacy:
            send = _without_resource_metadata(send)
        if method != "POST" or path not in ("/mcp", "/token", "/revoke", "/register"):
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if path == "/register" and self.options.advertise_basic_first:
            asked = json.loads(body)
            body = json.dumps({**asked, "token_endpoint_auth_method": "client_secret_post"}).encode()
        if path == "/revoke" and "client_secret" not in parse_qs(body.decode()):
            # The SDK's RevocationRequest requires the key even for public clients, which RFC 7009 lets
            # leave it out (modelcontextprotocol/python-sdk#3508); answer as a fixed SDK would.
            body += b"&client_secret="
        if path == "/token" and parse_qs(body.decode()).get("grant_type") == ["client_credentials"]:
            await self._client_credentials(scope, body, send)
            return
        if path == "/mcp" and await self._lacks_admin_scope(scope, body):
            metadata = f"{self.resource.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp"
            challenge = (
                f'Bearer error="insufficient_scope", scope="{BASE_SCOPE} {ADMIN_SCOPE}", '
                f'resource_metadata="{metadata}"'
            )
            await _respond(
                send, 403, b'{"error": "insufficient_scope"}', [(b"www-authenticate", challenge.encode())]
            )
            return
        await self.app(scope, _replay(body, receive), send)

    async def _lacks_admin_scope(self, scope: Scope, body: bytes) -> bool:
        try:
            message = json.loads(body)
        except ValueError:
            return False
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return False
        if message.get("params", {}).get("name") != "admin_report":
            return False
        token = await self.provider.load_access_token(_bearer(scope) or "")
        return token is not None and ADMIN_SCOPE not in token.scopes

    async def _client_credentials(self, scope: Scope, body: bytes, send: Send) -> None:
        form = {key: values[0] for key, values in parse_qs(body.decode()).items()}
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        basic = dict(scope["headers"]).get(b"authorization", b"").decode()
        if basic.startswith("Basic "):
            client_id, _, client_secret = base64.b64decode(basic[6:]).decode().partition(":")
        client = self.provider.clients.get(client_id or "")
        wrong_method = (
            client is not None and client.token_endpoint_auth_method == "client_secret_basic" and not basic
        )
        if client is None or client.client_secret != client_secret or wrong_method:
            await _respond(send, 401, b'{"error": "invalid_client"}')
            return
        scopes = form.get("scope", BASE_SCOPE).split()
        events.append({"event": "token", "grant": "client_credentials", "resource": form.get("resource")})
        token = self.provider.issue(client.client_id or "", scopes, form.get("resource"))
        await _respond(send, 200, token.model_dump_json(exclude_none=True).encode())


def _without_resource_metadata(send: Send) -> Send:
    """Answers as a 2025-03-26 server does: its 401 names no protected-resource metadata."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (name, b'Bearer error="invalid_token"' if name.lower() == b"www-authenticate" else value)
                for name, value in message.get("headers", [])
            ]
            message = {**message, "headers": headers}
        await send(message)

    return sending


def _bearer(scope: Scope) -> str | None:
    header = dict(scope["headers"]).get(b"authorization", b"").decode()
    return header[7:] if header.lower().startswith("bearer ") else None


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The request body read already, then the client's own messages (a disconnect, when it comes)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


async def _respond(
    send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    main()
