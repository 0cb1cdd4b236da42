"""Charging a run's model tokens to its user as each model request completes (the limits: `_limits`).

`RunMeter` is one run's account: opened when the run is admitted (holding tokens back from the user's
day), charged by `MeteredModel` as each request through it completes, and closed when the run ends. A
request is charged the usage its provider reported, or, when its stream ended without one (the client
hung up, the run was cancelled, the agent closed it after its calls), an estimate from the characters
sent and received: what a provider bills for a reply cut off. A request that failed before the model
answered costs nothing.

While a run goes on its meter is `RUN_METER`, which the tool calls it makes carry: a server's sampling
request during one of them is answered by `metered_sampling`'s model, on the same account.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import anyio

from toolbridge.errors import ModelError, StoreError, ToolbridgeError
from toolbridge.mcp.calls_in_flight import CallInFlight
from toolbridge.models import (
    Model,
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from toolbridge.models.base import event_stream
from toolbridge.server._limits import LimitExceeded, UsageLimits
from toolbridge.types import Usage

__all__ = ["RUN_METER", "MeteredModel", "RunMeter", "metered_sampling"]

_log = logging.getLogger(__name__)

CHARS_PER_TOKEN = 4
"""How an estimate counts: about four characters of English text or JSON make a token."""
SAFE_MAX_TOKENS = 4096
"""An output limit every chat model takes. A request that sets none is given what is left of its
user's day only when that is less (a higher one could be more than the model allows)."""
_BINARY_FIELDS = frozenset({"data", "blob"})

RUN_METER: ContextVar[RunMeter | None] = ContextVar("toolbridge_run_meter", default=None)
"""The meter of the run the current task serves (None: no run of this server's)."""


class RunMeter:
    """One run's account of model tokens, charged to its user (see the module doc). A meter without a
    user (no users exist, or the token's holder asked) charges nobody and limits nothing."""

    def __init__(
        self,
        limits: UsageLimits | None = None,
        user: str | None = None,
        user_id: int | None = None,
        usage_id: int | None = None,
    ) -> None:
        self._limits = limits
        self._user = user
        self._user_id = user_id
        self._usage_id = usage_id

    @classmethod
    async def open(cls, limits: UsageLimits, user: str | None, user_id: int | None, *, hold: int) -> RunMeter:
        """Admit a run of `user` holding `hold` tokens of their day; a 429 `ApiError` when it is used up."""
        if user is None or user_id is None:
            return cls()
        try:
            usage_id = await anyio.to_thread.run_sync(limits.hold, user, user_id, hold)
        except LimitExceeded as exceeded:
            raise exceeded.api_error() from None
        except StoreError as error:
            if limits.token_limit(user) is not None:
                raise  # a limit that cannot be counted admits nobody (a 503)
            # Without a limit the tokens are only figures: the answer outweighs them, as for the call log.
            _log.warning("model tokens of user %r will not be counted for this run: %s", user, error)
            return cls()
        return cls(limits, user, user_id, usage_id)

    @contextmanager
    def running(self) -> Iterator[None]:
        """Around the run: the tool calls it makes carry this meter (`RUN_METER`)."""
        token = RUN_METER.set(self)
        try:
            yield
        finally:
            RUN_METER.reset(token)

    async def allowance(self, model: str) -> int | None:
        """The tokens the run's next model request may use (None: no limit); a `ModelError` (429) when
        its user has none left."""
        if self._limits is None or self._user is None or self._user_id is None:
            return None
        try:
            return await anyio.to_thread.run_sync(
                self._limits.allowance, self._user, self._user_id, self._usage_id
            )
        except LimitExceeded as exceeded:
            headers = {"retry-after": str(exceeded.retry_after)}
            raise ModelError(
                exceeded.message, model=model, status=429, code="rate_limit_exceeded", headers=headers
            ) from None

    async def charge(self, usage: Usage) -> None:
        """Add a completed model request's tokens to the run's, also when the run is being cancelled."""
        if self._limits is None or self._usage_id is None or not (usage.input_tokens or usage.output_tokens):
            return
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(self._limits.charge, self._usage_id, usage)
            except StoreError as error:  # the answer outweighs its record, as for the call log
                _log.warning("model tokens of user %r not charged: %s", self._user, error)

    async def close(self) -> None:
        """The run ended: give back what it still holds of its user's day."""
        if self._limits is None or self._usage_id is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(self._limits.release, self._usage_id)
            except StoreError as error:  # the hold lapses on its own (`HOLD_LIFETIME`)
                _log.warning("the tokens held for a run of user %r stay held for now: %s", self._user, error)


class MeteredModel(Model):
    """`inner`, each request of which is allowed what its run's user has left (its `max_tokens` capped
    to that) and charged to the run as it completes. Everything else is the inner model's."""

    def __init__(self, inner: Model, meter: RunMeter) -> None:
        self.inner = inner
        self.meter = meter
        self.name = inner.name
        self.dialect = inner.dialect
        self.reasoning_open = inner.reasoning_open
        self.model_id = inner.model_id
        self.settings = inner.settings
        self.tool_mode = inner.tool_mode
        self.tool_search = inner.tool_search

    def __repr__(self) -> str:
        return f"MeteredModel({self.inner!r})"

    def __getattr__(self, name: str) -> Any:
        # What else the inner model offers: its `base_url`, which keys the memory of its tool mode.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        return self._stream(request)

    @asynccontextmanager
    async def _stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[ModelEvent]]:
        allowance = await self.meter.allowance(self.name)
        request = _capped(request, allowance, self.settings.max_tokens)
        tally = _Tally(request)
        try:
            async with self.inner.stream(request) as events, event_stream(tally.watch(events)) as watched:
                yield watched
        finally:
            await self.meter.charge(tally.usage())

    async def aclose(self) -> None:
        """Nothing: the inner model is its owner's to close."""


def metered_sampling(limits: UsageLimits) -> Callable[[Model, CallInFlight | None], Model]:
    """For `ServerRequests`: the model a server's sampling request during `call` is answered with,
    charged to the run that made the call. A request nobody can be charged for (made outside a call, or
    during one of several that cannot be told apart) is refused while token limits are set."""

    def model_for(model: Model, call: CallInFlight | None) -> Model:
        meter = call.context.get(RUN_METER) if call is not None else None
        if meter is not None:
            return MeteredModel(model, meter)
        if limits.limits_tokens:
            raise ToolbridgeError(
                "users' model tokens are limited (server.limits.tokens_per_day), and toolbridge serve "
                "cannot tell whose run this request is for: it came outside a tool call, or during one of "
                "several calls to the server at once"
            )
        return model

    return model_for


def _capped(request: ModelRequest, allowance: int | None, own: int | None) -> ModelRequest:
    """`request` with `max_tokens` no more than `allowance` (see `SAFE_MAX_TOKENS`)."""
    asked = request.settings.max_tokens or own
    if allowance is None or (asked is not None and asked <= allowance):
        return request
    if asked is None and allowance > SAFE_MAX_TOKENS:
        return request
    return replace(request, settings=replace(request.settings, max_tokens=allowance))


class _Tally:
    """What one model request used: its reported usage, else an estimate once the model answered."""

    def __init__(self, request: ModelRequest) -> None:
        self._request = request
        self._reported: Usage | None = None
        self._answered = False
        self._output_chars = 0

    async def watch(self, events: AsyncIterator[ModelEvent]) -> AsyncGenerator[ModelEvent]:
        async for event in events:
            self._answered = True
            if isinstance(event, UsageReport):
                self._reported = event.usage
            elif isinstance(event, TextDelta | ReasoningDelta):
                self._output_chars += len(event.text)
            elif isinstance(event, ToolCallDelta):
                self._output_chars += len(event.name or "") + len(event.arguments)
            yield event

    def usage(self) -> Usage:
        if self._reported is not None:
            return self._reported
        if not self._answered:
            return Usage()
        sent = [*self._request.messages, *self._request.tools]
        input_chars = sum(_text_chars(item.model_dump(mode="json")) for item in sent)
        return Usage(input_tokens=_tokens(input_chars), output_tokens=_tokens(self._output_chars))


def _text_chars(value: object) -> int:
    """The characters of the text in a dumped message or tool (images and other binary data left out)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_text_chars(item) for key, item in value.items() if key not in _BINARY_FIELDS)
    if isinstance(value, list):
        return sum(_text_chars(item) for item in value)
    return 0


def _tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)
