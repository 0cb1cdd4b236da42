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
- `Passthrough` (a gateway passing its client's request on, 2026-07-28 MRTR): `ProbingClient` overrides
  `Client._drive_input_required`, the SDK's one seam between a first `InputRequiredResult` and its
  ask-and-retry driver, to hand the result back (`InputRequiredRelayed`) instead of answering it; and
  wraps the session's dispatcher's `send_raw_request` (the SDK stamps every request's `_meta` with
  the session's client capabilities just before it) to put the gateway's client's capabilities there.
- `drop_log_record` filters records of the SDK's loggers by their message text (`STDIO_PARSE_FAILURE`,
  `OAUTH_FLOW_ERROR`): tracebacks it logs for what toolbridge reports better itself.

tests/test_dependency_contracts.py checks each against the installed SDK, and pyproject.toml bounds `mcp`
below the next minor version, so a new SDK is checked before it is allowed.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
import mcp_types as mcp
from mcp import Client, ClientSession, MCPError
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import OAuthMetadata, OAuthToken
from mcp.shared.dispatcher import ProgressFnT

from toolbridge._deferred import CallDeferred
from toolbridge.config.model import DEFAULT_DISCOVER_TIMEOUT

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.session import ServerSession

__all__ = [
    "OAUTH_FLOW_ERROR",
    "PASSTHROUGH",
    "STDIO_PARSE_FAILURE",
    "EarlyRefresh",
    "InputRequiredRelayed",
    "Passthrough",
    "ProbingClient",
    "SdkLogRecord",
    "UpstreamRefused",
    "connection_of",
    "drop_log_record",
]


def connection_of(session: ServerSession) -> Connection:
    """The connection (one per downstream client) behind a request handler's session."""
    connection: Connection = session._connection
    return connection


@dataclass(frozen=True)
class Passthrough:
    """A request a gateway's client made, passed on to an upstream server as that client's own: set
    `PASSTHROUGH` around the upstream call (its task and the tasks it starts see it)."""

    client_capabilities: mcp.ClientCapabilities | None = None
    """What the upstream server is told its client offers, on 2026-07-28 where each request says so
    (None: the session's own). Extensions stay the session's: they are what this client can follow."""
    input_responses: mcp.InputResponses | None = None
    """The client's answers to an `input_required` the upstream server gave, sent with the request."""
    request_state: str | None = None
    """The upstream server's `requestState`, echoed by the client, sent with the request."""
    input_required: bool = False
    """An `input_required` answer is raised as `InputRequiredRelayed` (for the client to answer),
    not answered through this client's callbacks."""
    client_revision: str | None = None
    """The revision the client speaks: one of the 2025 revisions has a server that speaks 2026-07-28
    to us called over a session of its own revision, where the server's questions can reach the client
    mid-call (`ServerConnection.call_tool_mcp`)."""
    relays_error: Callable[[MCPError], bool] = field(default=lambda error: False)
    """Which of the upstream server's errors to a `tools/call` are raised as `UpstreamRefused`
    (for the client to get as they are), not turned into an error result."""


PASSTHROUGH: ContextVar[Passthrough | None] = ContextVar("toolbridge_passthrough", default=None)


class InputRequiredRelayed(CallDeferred):
    """The upstream server answered `input_required`, and the `Passthrough` hands it to its client (a
    deferral of the call: the client's next request, with the answers, is the call that counts)."""

    def __init__(self, result: mcp.InputRequiredResult) -> None:
        super().__init__(
            result, "the server asked the client for input; the client answers with its next request"
        )
        self.result = result


class UpstreamRefused(Exception):
    """The upstream server refused a passed-through tool call with an error its client gets as it is."""

    def __init__(self, error: MCPError) -> None:
        super().__init__(f"the server refused the call: {error.error.message} (JSON-RPC error {error.code})")
        self.error = error


_PASSED_ON = ("sampling", "elicitation", "roots")
"""The client capabilities a passed-through request carries as its client's (the upstream server's
questions go to that client)."""


def _passed_on_capabilities(ours: Mapping[str, Any], theirs: mcp.ClientCapabilities) -> dict[str, Any]:
    wire = theirs.model_dump(by_alias=True, mode="json", exclude_none=True)
    kept = {key: value for key, value in ours.items() if key not in _PASSED_ON}
    return {**kept, **{key: wire[key] for key in _PASSED_ON if key in wire}}


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
        _stamp_passed_on_capabilities(session)
        return session

    async def _drive_input_required(self, first: Any, retry: Any) -> Any:
        passthrough = PASSTHROUGH.get()
        if (
            passthrough is not None
            and passthrough.input_required
            and isinstance(first, mcp.InputRequiredResult)
        ):
            raise InputRequiredRelayed(first)
        return await super()._drive_input_required(first, retry)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        read_timeout_seconds: float | None = None,
        progress_callback: ProgressFnT | None = None,
        **seeds: Any,
    ) -> mcp.CallToolResult:
        passthrough = PASSTHROUGH.get()
        if passthrough is not None:
            seeds = {**seeds, **_seeds(passthrough)}
        try:
            return await super().call_tool(name, arguments, read_timeout_seconds, progress_callback, **seeds)
        except MCPError as error:
            if passthrough is not None and passthrough.relays_error(error):
                raise UpstreamRefused(error) from error
            raise

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, **seeds: Any
    ) -> mcp.GetPromptResult:
        passthrough = PASSTHROUGH.get()
        if passthrough is not None:
            seeds = {**seeds, **_seeds(passthrough)}
        return await super().get_prompt(name, arguments, **seeds)

    async def read_resource(self, uri: str, **seeds: Any) -> mcp.ReadResourceResult:
        passthrough = PASSTHROUGH.get()
        if passthrough is not None:
            seeds = {**seeds, **_seeds(passthrough)}
        return await super().read_resource(uri, **seeds)


def _seeds(passthrough: Passthrough) -> dict[str, Any]:
    """The keyword arguments that send the client's answers and the server's state with a request."""
    return {"input_responses": passthrough.input_responses, "request_state": passthrough.request_state}


def _stamp_passed_on_capabilities(session: ClientSession) -> None:
    """Each request's `_meta` client capabilities (2026-07-28) as the `Passthrough`'s, when one is set."""
    dispatcher = session._dispatcher
    send = dispatcher.send_raw_request

    async def send_raw_request(
        method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> dict[str, Any]:
        passthrough = PASSTHROUGH.get()
        meta = params.get("_meta") if params is not None else None
        if passthrough is not None and passthrough.client_capabilities is not None and isinstance(meta, dict):
            ours = meta.get(mcp.CLIENT_CAPABILITIES_META_KEY)
            if isinstance(ours, Mapping):
                meta[mcp.CLIENT_CAPABILITIES_META_KEY] = _passed_on_capabilities(
                    ours, passthrough.client_capabilities
                )
        return await send(method, params, opts)

    dispatcher.send_raw_request = send_raw_request  # type: ignore[method-assign]


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
