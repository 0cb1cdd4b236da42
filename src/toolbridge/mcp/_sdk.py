"""Everything toolbridge relies on in the MCP SDK (`mcp`) beyond its public API, in one module.

The rest of toolbridge calls the names here and touches no SDK internals. What each relies on, and why:

- `connection_of(session)` reads `ServerSession._connection`. A request handler of the gateway gets a
  new `ServerSession` per request; the `Connection` behind it is what lasts as long as the downstream
  client does, with the `state` and `exit_stack` the SDK offers for per-connection data and cleanup.
  The handler's context has no public accessor for it yet (the SDK's `Context.connection` is not wired
  to handlers: its TODO(L54) rework will).
- `ProbingClient` overrides `Client._build_session`, the SDK's seam for making the session, to shorten
  the first `server/discover` probe: the SDK waits a module constant (10 s) for it, calling
  `self.send_discover` from its negotiation, so an instance attribute of that name takes its place. It
  relies on `ClientSession.initialize` returning its cached result when called again.
- `EarlyRefresh`, a mixin for the SDK's OAuth providers, overrides their `_initialize` (where they load
  the stored tokens) and replaces their `context`, an `OAuthContext` dataclass rebuilt from its init
  fields, by one whose `update_token_expiry` counts a token as expiring early.
- `drop_log_record` filters records of the SDK's loggers by their message text (`STDIO_PARSE_FAILURE`,
  `OAUTH_FLOW_ERROR`): tracebacks it logs for what toolbridge reports better itself.

tests/test_dependency_contracts.py checks each against the installed SDK, and pyproject.toml bounds `mcp`
below the next minor version, so a new SDK is checked before it is allowed.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import mcp_types as mcp
from mcp import Client, ClientSession, MCPError
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import OAuthMetadata, OAuthToken

from toolbridge.config.model import DEFAULT_DISCOVER_TIMEOUT

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.session import ServerSession

__all__ = [
    "OAUTH_FLOW_ERROR",
    "STDIO_PARSE_FAILURE",
    "EarlyRefresh",
    "ProbingClient",
    "SdkLogRecord",
    "connection_of",
    "drop_log_record",
]


def connection_of(session: ServerSession) -> Connection:
    """The connection (one per downstream client) behind a request handler's session."""
    connection: Connection = session._connection
    return connection


@dataclass
class ProbingClient(Client):
    """The SDK's `Client`, whose first `server/discover` waits `discover_timeout` seconds (not the SDK's 10)
    before `initialize` is tried beside it.

    A server that never answers the probe (not even with an error) is then one of the older revision
    after a short wait, as the SDK decides when its own timeout expires. A 2026-07-28 server that was only
    slow refuses that `initialize` (-32022, or a bare HTTP 400), and its late answer to the probe still
    counts. Whichever succeeds first decides; a later probe (the SDK's retry at another version) waits
    as long as the SDK does.
    """

    discover_timeout: float = DEFAULT_DISCOVER_TIMEOUT

    async def _build_session(self, exit_stack: AsyncExitStack) -> ClientSession:
        session = await super()._build_session(exit_stack)
        probe = session.send_discover
        wait = self.discover_timeout
        probes = 0

        async def send_discover(version: str) -> dict[str, Any]:
            nonlocal probes
            probes += 1
            if probes > 1:
                return await probe(version)
            return await _probe_then_handshake(session, probe, version, wait)

        session.send_discover = send_discover  # type: ignore[method-assign]
        return session


class _Handshake(enum.Enum):
    NOT_SENT = enum.auto()
    SENT = enum.auto()
    DONE = enum.auto()
    FAILED = enum.auto()


@dataclass
class _DiscoverRace:
    """How `server/discover` and a late `initialize` beside it have answered so far."""

    answer: dict[str, Any] | None = None
    refused: MCPError | None = None
    broken: Exception | None = None
    """A transport failure: not a verdict on the revision."""
    handshake: _Handshake = _Handshake.NOT_SENT

    @property
    def decided(self) -> bool:
        if self.answer is not None or self.broken is not None or self.handshake is _Handshake.DONE:
            return True
        # An old server said no (or both failed): the SDK's fallback follows.
        return self.refused is not None and self.handshake is not _Handshake.SENT


async def _probe_then_handshake(
    session: ClientSession, probe: Callable[[str], Awaitable[dict[str, Any]]], version: str, wait: float
) -> dict[str, Any]:
    """The probe's answer, or (raised) why the SDK should go on with `initialize`: the probe was refused,
    or `initialize`, sent once the probe had waited `wait` seconds, succeeded first (the SDK's own call
    then returns its cached result)."""
    race = _DiscoverRace()
    decided = anyio.Event()

    def settle() -> None:
        if race.decided:
            decided.set()

    async def probing() -> None:
        try:
            race.answer = await probe(version)
        except MCPError as exc:
            race.refused = exc
        except Exception as exc:
            race.broken = exc
        settle()

    async def handshaking() -> None:
        race.handshake = _Handshake.SENT
        try:
            await session.initialize()
        except Exception:  # refused, or answered with no InitializeResult: the probe's answer decides
            race.handshake = _Handshake.FAILED
        else:
            race.handshake = _Handshake.DONE
        settle()

    async with anyio.create_task_group() as group:
        group.start_soon(probing)
        with anyio.move_on_after(wait):
            await decided.wait()
        if not decided.is_set():
            group.start_soon(handshaking)
            await decided.wait()
        group.cancel_scope.cancel()
    if race.handshake is _Handshake.DONE:
        # What the SDK raises when its own wait runs out, so its (now answered) `initialize` follows.
        raise MCPError(
            mcp.REQUEST_TIMEOUT, f"no answer to server/discover in {wait:g} s; initialize answered"
        )
    if race.broken is not None:
        raise race.broken
    if race.refused is not None:
        raise race.refused
    assert race.answer is not None
    return race.answer


class _TunedOAuthContext(OAuthContext):
    """The SDK's OAuth context with two policies of toolbridge's: a token counts as expired
    `margin(token)` seconds early, and the provider picks how the client authenticates at the token
    endpoint once the authorization server's metadata is known."""

    margin: Callable[[OAuthToken], float]
    token_auth: Callable[[OAuthMetadata | None], str | None]

    def update_token_expiry(self, token: OAuthToken) -> None:
        super().update_token_expiry(token)
        if self.token_expiry_time is not None:
            self.token_expiry_time -= self.margin(token)

    def prepare_token_auth(
        self, data: dict[str, str], headers: dict[str, str] | None = None
    ) -> tuple[dict[str, str], dict[str, str]]:
        method = self.token_auth(self.oauth_metadata)
        if method is not None and self.client_info is not None:
            self.client_info = self.client_info.model_copy(update={"token_endpoint_auth_method": method})
        return super().prepare_token_auth(data, headers)


class EarlyRefresh:
    """Mixin, before the SDK's `OAuthClientProvider` (or a subclass) in the bases: tokens are refreshed
    `refresh_margin(token)` seconds before they expire, a stored token's expiry, which the SDK does not
    keep, is restored from `stored_token_expiry()` once the SDK has loaded the stored tokens, and
    `token_auth(metadata)` may choose the client's token endpoint authentication method (None: the
    client record's) when the SDK builds a token request (`OAuthContext.prepare_token_auth`).

    A subclass defines the first two and calls `refresh_early()` at the end of its `__init__`.
    """

    context: OAuthContext

    def refresh_margin(self, token: OAuthToken) -> float:
        raise NotImplementedError

    def stored_token_expiry(self) -> float | None:
        """When the stored token expires (seconds since the epoch), if known."""
        raise NotImplementedError

    def token_auth(self, metadata: OAuthMetadata | None) -> str | None:
        return None

    def refresh_early(self) -> None:
        context = self.context
        fields = {
            field.name: getattr(context, field.name) for field in dataclasses.fields(context) if field.init
        }
        early = _TunedOAuthContext(**fields)
        early.margin = self.refresh_margin
        early.token_auth = self.token_auth
        self.context = early

    async def _initialize(self) -> None:
        await super()._initialize()  # type: ignore[misc]
        tokens, expires_at = self.context.current_tokens, self.stored_token_expiry()
        if tokens is not None and expires_at is not None:
            self.context.token_expiry_time = expires_at - self.refresh_margin(tokens)


class SdkLogRecord(NamedTuple):
    """A record one of the SDK's loggers writes, by the logger's name and the record's message."""

    logger: str
    message: str


STDIO_PARSE_FAILURE = SdkLogRecord("mcp.client.stdio", "Failed to parse JSONRPC message from server")
"""Logged with a traceback for each line of a stdio server's output that is not a JSON-RPC message."""

OAUTH_FLOW_ERROR = SdkLogRecord("mcp.client.auth.oauth2", "OAuth flow error")
"""Logged with a traceback when an OAuth flow fails, before the failure is raised."""


class _Drop(logging.Filter):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != self.message


def drop_log_record(record: SdkLogRecord) -> None:
    """Keep the SDK's logger from writing `record` (once per process, however often this is called)."""
    logger = logging.getLogger(record.logger)
    if not any(isinstance(f, _Drop) and f.message == record.message for f in logger.filters):
        logger.addFilter(_Drop(record.message))
