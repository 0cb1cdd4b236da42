"""The checks in front of every request, as one ASGI middleware so they also cover streamed responses:
`Host` and `Origin` must be this server's and bodies stay within `server.max_body_bytes`
(`toolbridge._request_guard`, shared with the gateway), refused in the OpenAI error format.

Who is asking (the token, users' keys) is checked next, by `_access.AccessMiddleware`.
"""

from __future__ import annotations

from starlette.types import ASGIApp

from toolbridge._request_guard import GuardedService, RequestGuard
from toolbridge.server._errors import error_response
from toolbridge.server._settings import ServerSettings

__all__ = ["SecurityMiddleware"]


class SecurityMiddleware(RequestGuard):
    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        service = GuardedService("server", f"http://127.0.0.1:{settings.port}/", config_section="server")
        super().__init__(
            app,
            hosts=settings.accepted_hosts(),
            max_body_bytes=settings.max_body_bytes,
            service=service,
            refuse=error_response,
        )
