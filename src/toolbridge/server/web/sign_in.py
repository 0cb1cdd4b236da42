"""The web page's "Sign in" for a server behind OAuth: the same flow as `toolbridge auth login`, with the
browser being the page's own (it opens the authorization address in a new tab).

`POST /api/servers/{name}/sign-in` starts the flow and answers with the address as soon as the server's
authorization server gave it; the callback listener on 127.0.0.1 then waits for the browser to come
back. `GET` on the same path waits for that end. The new tokens land in the token file, where the
server's next connection finds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio
import anyio.abc
from fastapi import APIRouter, Path, Request

from toolbridge.config.model import Config, ServerConfig
from toolbridge.errors import ServerError
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.client_features import ClientFeatures
from toolbridge.mcp.oauth import FileTokenStore, OAuth, ServerTokenStorage, loopback_sign_in, uses_oauth
from toolbridge.server._access import require_admin
from toolbridge.server._errors import ApiError

__all__ = ["SignIns", "router"]

router = APIRouter(prefix="/api")

SIGN_IN_TIMEOUT = 600.0
"""Seconds a started sign-in waits for the browser to come back before it gives up."""

ServerName = Annotated[str, Path(description="A server's name, from GET /api/servers.")]


@dataclass
class _SignIn:
    url: str | None = None
    error: str | None = None
    shown: anyio.Event = field(default_factory=anyio.Event)
    done: anyio.Event = field(default_factory=anyio.Event)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class SignIns:
    """The sign-ins in progress, one per server at most; they run in the app's task group."""

    def __init__(self, config: Config, task_group: anyio.abc.TaskGroup) -> None:
        self._config = config
        self._task_group = task_group
        self._pending: dict[str, _SignIn] = {}

    async def start(self, name: str) -> _SignIn:
        server = self._server(name)
        previous = self._pending.get(name)
        if previous is not None:  # a second click: the newest sign-in wins (it needs the same port)
            previous.scope.cancel()
            await previous.done.wait()
        attempt = self._pending[name] = _SignIn()
        self._task_group.start_soon(self._run, server, attempt)
        await attempt.shown.wait()
        return attempt

    async def wait(self, name: str) -> _SignIn | None:
        attempt = self._pending.get(name)
        if attempt is not None:
            await attempt.done.wait()
        return attempt

    async def _run(self, server: ServerConfig, attempt: _SignIn) -> None:
        async def show(_server: str, url: str) -> None:
            attempt.url = url
            attempt.shown.set()

        tokens = FileTokenStore()
        features = ClientFeatures(oauth=OAuth(tokens=tokens, sign_in=loopback_sign_in(show)))
        try:
            with attempt.scope:
                attempt.scope.deadline = anyio.current_time() + SIGN_IN_TIMEOUT
                await ServerTokenStorage(server, tokens).forget_tokens()  # a new sign-in, not the old tokens
                async with ServerConnection(server, features=features) as connection:
                    await connection.connect()
            if attempt.scope.cancelled_caught:
                attempt.error = "The sign-in was not completed in time, or a newer one replaced it."
        except ServerError as exc:
            attempt.error = str(exc)
        finally:
            attempt.shown.set()
            attempt.done.set()

    def _server(self, name: str) -> ServerConfig:
        server = self._config.servers.get(name)
        if server is None:
            raise ApiError(404, f"no MCP server named {name!r} is configured", param="name")
        if not uses_oauth(server):
            raise ApiError(
                400,
                f"server {name!r} does not sign in with OAuth (it runs over stdio or sends its own "
                "Authorization header)",
                param="name",
            )
        return server

    @staticmethod
    def of(request: Request) -> SignIns:
        sign_ins: SignIns = request.app.state.sign_ins
        return sign_ins


@router.post("/servers/{name}/sign-in")
async def start_sign_in(request: Request, name: ServerName) -> dict[str, Any]:
    """Start signing in to the server: answers with the address to open in the browser (`url`), or with
    no address when the server let us in without one, or with the `error` that stopped it."""
    require_admin(request, "sign toolbridge in to an MCP server")
    attempt = await SignIns.of(request).start(name)
    return {"url": attempt.url, "done": attempt.done.is_set(), "error": attempt.error}


@router.get("/servers/{name}/sign-in")
async def finish_sign_in(request: Request, name: ServerName) -> dict[str, Any]:
    """Wait until the server's sign-in in progress ends; `signed_in` says how it ended."""
    attempt = await SignIns.of(request).wait(name)
    if attempt is None:
        raise ApiError(404, f"no sign-in to server {name!r} was started", param="name")
    return {"signed_in": attempt.error is None, "error": attempt.error}
