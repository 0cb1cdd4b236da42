"""Who is asking: the bearer token or a user's API key, checked in front of every request but the page's
own files, and the per-user request limits.

- No users and no token: this machine only, everyone is admin (the default).
- A token (`--token`, `$TOOLBRIDGE_TOKEN`, `server.token`) and no users: the one-person setup; the token
  is required.
- Users (`toolbridge users add`): every request needs a user's key (`toolbridge access-keys create`). The token,
  when one is set, still works and acts as an admin with no limits (for scripts and emergencies).
  Once a running server has required keys it goes on requiring them, even when the last user is removed
  (it may listen beyond this machine because users existed); a restart with no users follows the rules
  above again.

The key or token goes in `Authorization: Bearer ...`, or `?token=` on a chat's event stream (the one
endpoint `EventSource` calls, which cannot send headers). Requests that start a run count against the
user's limits (`_limits`); over them, the answer is 429 with `Retry-After`.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass
from urllib.parse import unquote_plus

import anyio
from fastapi import Request
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from toolbridge.server._errors import ApiError, error_response_for
from toolbridge.server._limits import LimitExceeded, UsageLimits
from toolbridge.server._settings import ServerSettings, is_loopback
from toolbridge.store import KeyOwner, Store, StoreError
from toolbridge.store.users import KEY_PREFIX
from toolbridge.telemetry import bind_log_context

__all__ = ["ANYONE", "AccessMiddleware", "Caller", "KeysRequired", "caller_of", "require_admin"]

# The page's files hold no data, and a browser cannot send a token when it opens a page.
_PUBLIC_PATHS = ("/", "/index.html", "/favicon.ico", "/healthz", "/readyz")
_PUBLIC_PREFIXES = ("/static/",)
# The one endpoint that may carry the token in its URL: URLs end up in logs and browser history, so no
# other endpoint accepts it there.
_TOKEN_IN_QUERY_PATH = re.compile(r"^/api/chats/[^/]+/events$")
# Requests that start a run: they count against a user's limits.
_RUN_STARTS = re.compile(r"^(/v1/chat/completions|/v1/messages|/v1/responses|/api/chats/[^/]+/messages)$")
_SCOPE_KEY = "toolbridge.caller"


@dataclass(frozen=True)
class Caller:
    """Who made a request: a user (by key), or an admin without a user (no users, or the token)."""

    user_id: int | None
    name: str | None
    admin: bool

    def sees(self, owner_id: int | None) -> bool:
        """Whether this caller may see what belongs to user `owner_id` (None: to nobody, admins')."""
        return self.admin or (owner_id is not None and owner_id == self.user_id)


ANYONE = Caller(user_id=None, name=None, admin=True)
"""No users and no token: whoever can reach this machine's loopback address."""
TOKEN_HOLDER = Caller(user_id=None, name=None, admin=True)


def caller_of(request: Request) -> Caller:
    caller: Caller = request.scope.get(_SCOPE_KEY, ANYONE)
    return caller


def require_admin(request: Request, what: str) -> None:
    if not caller_of(request).admin:
        raise ApiError(403, f"only admins may {what}; ask one, or use an admin's key")


def _query_tokens(scope: Scope) -> list[str]:
    """The values of `token=` in the query string. The name must be spelt exactly: parse_qs would also
    decode `%74oken=`, a spelling that slips past anything watching for `token=` (log redaction, proxies)."""
    query = scope.get("query_string", b"").decode("latin-1")
    pairs = (part.partition("=") for part in query.split("&"))
    return [unquote_plus(value) for name, sep, value in pairs if name == "token" and sep]


class KeysRequired:
    """Whether users' keys are required: from the first time users are seen (at start-up, or when one is
    added while serving) until the server stops, whatever happens to the users meanwhile."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._required = False

    async def start(self) -> None:
        """Look before serving: a server started with users requires keys from its first request."""
        await self.now()

    async def now(self) -> bool:
        if not self._required:
            self._required = await anyio.to_thread.run_sync(self._store.users.any)
        return self._required

    async def users_left(self) -> bool:
        return await anyio.to_thread.run_sync(self._store.users.any)


class AccessMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        settings: ServerSettings,
        store: Store,
        limits: UsageLimits,
        keys_required: KeysRequired | None = None,
    ) -> None:
        self.app = app
        self.settings = settings
        self.store = store
        self.limits = limits
        self.keys_required = keys_required or KeysRequired(store)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._public(scope["path"]):
            await self.app(scope, receive, send)
            return
        try:
            caller = await self._caller(scope, Headers(scope=scope))
        except StoreError as error:  # middleware runs outside the app's handlers: answered as they would
            failed = error_response_for(
                scope["path"], 503, f"the database failed: {error}", code="store_error"
            )
            await failed(scope, receive, send)
            return
        if isinstance(caller, str):
            await error_response_for(scope["path"], 401, caller)(scope, receive, send)
            return
        if caller.name is not None and caller.user_id is not None and self._starts_a_run(scope):
            refusal = await self._over_limit(scope["path"], caller.name, caller.user_id)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        scope[_SCOPE_KEY] = caller
        with bind_log_context(user=caller.name):  # runs started here inherit it
            await self.app(scope, receive, send)

    @staticmethod
    def _starts_a_run(scope: Scope) -> bool:
        return scope["method"] == "POST" and _RUN_STARTS.match(scope["path"]) is not None

    async def _over_limit(self, path: str, user: str, user_id: int) -> Response | None:
        """Count a request of a user that starts a run against their limits; the refusal, if over one."""
        try:
            await anyio.to_thread.run_sync(self.limits.admit, user, user_id)
        except LimitExceeded as exceeded:
            headers = {"Retry-After": str(exceeded.retry_after)}
            return error_response_for(
                path, 429, exceeded.message, code="rate_limit_exceeded", headers=headers
            )
        except StoreError as error:  # middleware runs outside the app's handlers: answered as they would
            return error_response_for(path, 503, f"the database failed: {error}", code="store_error")
        return None

    @staticmethod
    def _public(path: str) -> bool:
        return path in _PUBLIC_PATHS or path.startswith(_PUBLIC_PREFIXES)

    async def _caller(self, scope: Scope, headers: Headers) -> Caller | str:
        """Who is asking, or why they are refused."""
        given = self._credentials(scope, headers)
        token = self.settings.token
        if token is not None and any(hmac.compare_digest(g.encode(), token.encode()) for g in given):
            return TOKEN_HOLDER
        for key in (g for g in given if g.startswith(KEY_PREFIX)):
            owner: KeyOwner | None = await anyio.to_thread.run_sync(self.store.users.owner_of, key)
            if owner is not None:
                return Caller(user_id=owner.user_id, name=owner.name, admin=owner.admin)
        keys_required = await self.keys_required.now()
        if not keys_required and token is None and is_loopback(self.settings.host):
            return ANYONE
        if keys_required and not await self.keys_required.users_left():
            message = (
                "no users are left, and this server goes on requiring a user's key until it restarts "
                "(it may listen beyond this machine because users existed): add a user and a key "
                "(`toolbridge users add NAME`, `toolbridge access-keys create --user NAME`), use the token, or "
                "restart the server"
            )
        elif keys_required:
            message = (
                "missing, wrong or revoked API key: send 'Authorization: Bearer <key>' with a key from "
                "`toolbridge access-keys create --user NAME` (for OpenAI clients, use it as the api_key)"
            )
        elif token is None:  # beyond this machine with neither: `toolbridge serve` refuses to start so
            message = (
                f"this server listens on {self.settings.host} with neither a token nor users, so nobody "
                "may use it: restart it with --token, or add users (`toolbridge users add`)"
            )
        else:
            message = (
                "missing or wrong token: send the header 'Authorization: Bearer <token>' with the token "
                "given to `toolbridge serve --token` (for OpenAI clients, use it as the api_key)"
            )
        if _query_tokens(scope) and not _TOKEN_IN_QUERY_PATH.match(scope["path"]):
            message += "; ?token= is accepted only on /api/chats/{id}/events"
        return message

    @staticmethod
    def _credentials(scope: Scope, headers: Headers) -> list[str]:
        given = []
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            given.append(value.strip())
        if api_key := headers.get("x-api-key", "").strip():  # how Anthropic's clients send their key
            given.append(api_key)
        if _TOKEN_IN_QUERY_PATH.match(scope["path"]):
            given += _query_tokens(scope)
        return given
