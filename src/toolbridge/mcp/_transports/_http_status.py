"""What an HTTP server answered, where the SDK keeps only a JSON-RPC stand-in for it.

The SDK's streamable HTTP client turns a 401 or a 405 into a generic "Server returned an error response";
a response hook on our own HTTP client keeps the status, so the failure can be named for what it is:
an authentication problem, or an old server that speaks only the SSE transport.
"""

from __future__ import annotations

from contextvars import ContextVar

import httpx2

from toolbridge.config.model import ServerConfig
from toolbridge.errors import ServerStartError

__all__ = ["CURRENT_WATCH", "HttpStatusWatch", "OldHttpServerError", "auth_required_message"]

AUTH_STATUSES = (401, 403)


class OldHttpServerError(ServerStartError):
    """The server refused a streamable HTTP POST the way servers of the older SSE transport do (4xx)."""


class HttpStatusWatch:
    """Remembers the error status the server last answered, and whether it forgot our session."""

    def __init__(self) -> None:
        self.status: int | None = None
        self.url: str | None = None
        self.session_gone = False
        """A request carrying our session id got 404: the server no longer knows the session (it was
        restarted, or expired it), and the spec says to start a new one."""

    async def on_response(self, response: httpx2.Response) -> None:
        if response.status_code == 404 and "mcp-session-id" in response.request.headers:
            self.session_gone = True
        # The latest answer counts: a 401 that an OAuth sign-in then got past says nothing any more.
        if response.status_code >= 400:
            self.status, self.url = response.status_code, str(response.request.url)
        elif response.status_code < 300:
            self.status = self.url = None

    def failure(self, config: ServerConfig) -> ServerStartError | None:
        """The error that names what the server answered, or None when nothing telling was seen."""
        if self.status is None:
            return None
        url = self.url or config.url or ""
        if self.status in AUTH_STATUSES:
            return ServerStartError(
                f"Server {config.name!r} could not be used: {auth_required_message(self.status, url)}",
                server=config.name,
                command=config.describe(),
            )
        if 400 <= self.status < 500:
            return OldHttpServerError(
                f"Server {config.name!r} answered HTTP {self.status} from {url} to a streamable HTTP request. "
                "Check the URL path (usually /mcp for streamable HTTP); a server of the older SSE transport "
                "wants 'type': 'sse'.",
                server=config.name,
                command=config.describe(),
            )
        return None


def auth_required_message(status: int, url: str) -> str:
    what = "authentication required" if status == 401 else "access denied"
    return f"HTTP {status} from {url}: {what} (configure `auth`, or the `headers` it needs)."


CURRENT_WATCH: ContextVar[HttpStatusWatch | None] = ContextVar("toolbridge_http_watch", default=None)
"""The watch of the session being opened: set by the session around `open_transport`, read by the
HTTP opener (the transport interface passes only the config)."""
