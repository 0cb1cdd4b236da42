"""The checks in front of every request, as ASGI middleware so they also cover streamed responses
(`toolbridge._request_guard`, shared with the gateway), refused in the OpenAI error format:
`SecurityMiddleware` first (`Host` and `Origin` must be this server's), then who is asking
(`_access.AccessMiddleware`), then `BodyLimitMiddleware` (bodies within `server.max_body_bytes`), so a
caller without a key gets 401 before any of its body is read.
"""

from __future__ import annotations

from starlette.types import ASGIApp

from toolbridge._request_guard import BodyLimit, GuardedService, RequestGuard
from toolbridge.server._errors import error_response
from toolbridge.server._settings import ServerSettings

__all__ = ["BodyLimitMiddleware", "SecurityMiddleware"]


def _service(settings: ServerSettings) -> GuardedService:
    return GuardedService("server", f"http://127.0.0.1:{settings.port}/", config_section="server")


class SecurityMiddleware(RequestGuard):
    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        super().__init__(
            app, hosts=settings.accepted_hosts(), service=_service(settings), refuse=error_response
        )


class BodyLimitMiddleware(BodyLimit):
    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        super().__init__(
            app, max_body_bytes=settings.max_body_bytes, service=_service(settings), refuse=error_response
        )
