"""Per-user limits of `toolbridge serve`: requests per minute and model tokens per UTC day.

Counted in the database, so that replicas sharing one PostgreSQL together allow a user the limit, not
the limit once per replica: each counted request is a row of `user_requests` (`Store.users.count_request`
locks the user while counting), and each run is a row of `model_usage`, charged as each of its model
requests completes (`_metering`), so a client that hangs up mid-run has paid for what was used.

A run is admitted while the user's day is under the limit counting what their runs in flight hold back:
each admitted run holds `RUN_HOLD` tokens (or the `max_tokens` its request asks for, if more) until its
charges replace them or it ends, so runs started at once cannot each spend the same allowance. Each
model request is then allowed what is left beside the other runs' holds (its `max_tokens` capped to it),
and refused when nothing is.

Only requests that start a run count against the minute (`POST /v1/chat/completions`, a chat message):
the page's reads, event streams and listings are free, so a modest limit never breaks the page.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from toolbridge.config.limits import LimitsConfig
from toolbridge.server._errors import ApiError
from toolbridge.store import Store, TokenCount
from toolbridge.types import Usage

__all__ = ["HOLD_LIFETIME", "RUN_HOLD", "LimitExceeded", "UsageLimits"]

_MINUTE = timedelta(minutes=1)

RUN_HOLD = 4096
"""Tokens an admitted run holds back from its user's day until its model requests are charged."""
HOLD_LIFETIME = timedelta(hours=1)
"""A run's hold counts while it was admitted or charged this recently: an older one is a run's that died
with its replica (a live run's requests are charged, and allowed what is left, all the same)."""


class LimitExceeded(Exception):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after

    def api_error(self) -> ApiError:
        """The 429 a request over the limit is answered with."""
        headers = {"Retry-After": str(self.retry_after)}
        return ApiError(429, self.message, code="rate_limit_exceeded", headers=headers)


class UsageLimits:
    """The configured limits, checked against the counts in `store`. Its methods block (they ask the
    database): async callers use a worker thread."""

    def __init__(self, config: LimitsConfig, store: Store) -> None:
        self._config = config
        self._store = store

    @property
    def limits_tokens(self) -> bool:
        """Whether any user has a token limit."""
        users = self._config.users.values()
        return self._config.tokens_per_day is not None or any(u.tokens_per_day for u in users)

    def token_limit(self, user: str) -> int | None:
        """`user`'s model tokens per day (None: no limit)."""
        return self._config.for_user(user).tokens_per_day

    def admit(self, user: str, user_id: int) -> None:
        """Count a request of `user` that starts a run; `LimitExceeded` when it is one too many."""
        limits = self._config.for_user(user)
        if limits.tokens_per_day is not None:
            self.allowance(user, user_id)
        if limits.requests_per_minute is None:
            return
        limit = limits.requests_per_minute
        oldest = self._store.users.count_request(user, limit=limit, window=_MINUTE)
        if oldest is not None:
            frees_up = oldest + _MINUTE - datetime.now(UTC)
            raise LimitExceeded(
                f"user {user!r} made {limit} requests in the last minute, the limit is {limit} "
                "(server.limits in the config); retry later",
                retry_after=max(1, math.ceil(frees_up.total_seconds())),
            )

    def hold(self, user: str, user_id: int, tokens: int) -> int:
        """Admit a run of `user`, holding back up to `tokens` of their day for it; the id its charges go
        to. `LimitExceeded` when their day is used up (or held for their runs in flight)."""
        limit = self._config.for_user(user).tokens_per_day
        now = datetime.now(UTC)
        admitted = self._store.users.reserve_tokens(
            user_id, limit=limit, tokens=tokens, since=_start_of_day(now), fresh_after=now - HOLD_LIFETIME
        )
        if isinstance(admitted, TokenCount):
            assert limit is not None, "only a limit refuses"
            raise _over_tokens(user, admitted, limit)
        return admitted

    def allowance(self, user: str, user_id: int, usage_id: int | None = None) -> int | None:
        """The tokens left of `user`'s day beside their runs' holds (but for run `usage_id`'s own); None:
        no limit. `LimitExceeded` when none are left."""
        limit = self._config.for_user(user).tokens_per_day
        if limit is None:
            return None
        now = datetime.now(UTC)
        counted = self._store.users.tokens_counted(
            user_id, since=_start_of_day(now), fresh_after=now - HOLD_LIFETIME, excluding=usage_id
        )
        if counted.total >= limit:
            raise _over_tokens(user, counted, limit)
        return limit - counted.total

    def charge(self, usage_id: int, usage: Usage) -> None:
        """Add a completed model request's tokens to its run: they count against the user's day, and in
        their figures."""
        self._store.users.charge_tokens(
            usage_id, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens
        )

    def release(self, usage_id: int) -> None:
        """The run ended: what it still held is the user's again."""
        self._store.users.release_tokens(usage_id)


def _over_tokens(user: str, counted: TokenCount, limit: int) -> LimitExceeded:
    now = datetime.now(UTC)
    midnight = _start_of_day(now) + timedelta(days=1)
    held = f" and holds {counted.held:,} for runs in progress" if counted.held else ""
    return LimitExceeded(
        f"user {user!r} has used {counted.charged:,} model tokens today{held}, the limit is {limit:,} "
        "(server.limits in the config); it resets at 00:00 UTC",
        retry_after=max(1, math.ceil((midnight - now).total_seconds())),
    )


def _start_of_day(moment: datetime) -> datetime:
    """00:00 UTC of `moment`'s day: when the tokens-per-day count starts."""
    return datetime.combine(moment.date(), datetime.min.time(), UTC)
