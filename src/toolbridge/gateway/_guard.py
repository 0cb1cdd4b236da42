"""The checks in front of every HTTP request to the gateway, as one ASGI middleware.

Host and Origin are checked as for the server (`toolbridge._request_guard`). Then, with tokens, every
request carries `Authorization: Bearer <token>`, checked before any body is read; then the body's size. The
token found becomes the SDK's authenticated user (`scope["user"]`, and `get_access_token()` in
handlers), so the SDK binds each session to the token that opened it and the tools handler knows which
token is calling.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Iterable, Mapping

from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp_types import INVALID_REQUEST
from starlette.authentication import AuthCredentials
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from toolbridge._request_guard import BodyLimit, GuardedService, RequestGuard

__all__ = ["HttpGuard"]


class HttpGuard(RequestGuard):
    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: set[str],
        tokens: Mapping[str, str],
        max_body_bytes: int,
        port: int,
    ) -> None:
        """`hosts`: accepted `Host` values (lowercase, with the port); `tokens`: name -> token (none:
        no token needed)."""
        service = GuardedService("gateway", f"http://127.0.0.1:{port}/mcp", config_section="gateway")
        # The token is checked (in `admit`) before the body limit reads a byte of the body.
        limited = BodyLimit(app, max_body_bytes=max_body_bytes, service=service, refuse=_refuse)
        super().__init__(limited, hosts=hosts, service=service, refuse=_refuse)
        self.tokens = {name: token.encode() for name, token in tokens.items()}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope["headers"] = trimmed_headers(scope["headers"])
        await super().__call__(scope, receive, send)

    async def admit(self, scope: Scope, headers: Headers, receive: Receive, send: Send) -> None:
        user = self._user(headers)
        if self.tokens and user is None:
            message = (
                "missing or wrong token: send the header 'Authorization: Bearer <token>' with a token "
                "given to `toolbridge gateway --token` or named in the config's gateway.tokens"
            )
            await _refuse(401, message, {"WWW-Authenticate": "Bearer"})(scope, receive, send)
            return
        if user is None:
            await super().admit(scope, headers, receive, send)
            return
        scope["user"], scope["auth"] = user, AuthCredentials([])
        reset = auth_context_var.set(user)
        try:
            await super().admit(scope, headers, receive, send)
        finally:
            auth_context_var.reset(reset)

    def _user(self, headers: Headers) -> AuthenticatedUser | None:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        candidate = given.strip().encode()
        for name, token in self.tokens.items():
            if hmac.compare_digest(candidate, token):
                return AuthenticatedUser(AccessToken(token=given.strip(), client_id=name, scopes=[]))
        return None


def trimmed_headers(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """Header values without the white space around them, which is no part of a value (RFC 9110
    section 5.5). uvicorn's httptools parser keeps it, and the SDK compares `Mcp-Method` / `Mcp-Name`
    as they come: `Mcp-Name:  my_tool ` would be refused as not naming the tool of the body."""
    return [(name, value.strip(b" \t")) for name, value in headers]


def _refuse(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """A JSON-RPC error without an id, as the SDK answers what it refuses over HTTP."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    return Response(json.dumps(body), status_code=status, media_type="application/json", headers=headers)
