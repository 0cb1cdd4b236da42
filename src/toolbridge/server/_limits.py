"""Per-user limits of `toolbridge serve`: requests per minute and model tokens per UTC day.

Counted in the database, so that replicas sharing one PostgreSQL together allow a user the limit, not
the limit once per replica: each counted request is a row of `user_requests` (`Store.users.count_request`
locks the user while counting), and a day's tokens are the sum of the user's `model_usage` rows, written
as each run finishes.

Only requests that start a run count against the minute (`POST /v1/chat/completions`, a chat message):
the page's reads, event streams and listings are free, so a modest limit never breaks the page.
"""

from __future__ import annotations

import logging
import math
from datetime import UTC, datetime, timedelta

import anyio

from toolbridge.agent import AgentEvent, FinalEvent
from toolbridge.config.limits import LimitsConfig
from toolbridge.store import RunRecorder, Store, StoreError
from toolbridge.types import Usage

__all__ = ["ChargingRecorder", "LimitExceeded", "UsageLimits", "charge_usage"]

_MINUTE = timedelta(minutes=1)
_log = logging.getLogger(__name__)


class LimitExceeded(Exception):
    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class UsageLimits:
    """The configured limits, checked against the counts in `store`. Its methods block (they ask the
    database): async callers use a worker thread."""

    def __init__(self, config: LimitsConfig, store: Store) -> None:
        self._config = config
        self._store = store

    def admit(self, user: str, user_id: int) -> None:
        """Count a request of `user` that starts a run; `LimitExceeded` when it is one too many."""
        limits = self._config.for_user(user)
        if limits.tokens_per_day is not None:
            used = self.tokens_today(user_id)
            if used >= limits.tokens_per_day:
                now = datetime.now(UTC)
                midnight = _start_of_day(now) + timedelta(days=1)
                raise LimitExceeded(
                    f"user {user!r} has used {used:,} model tokens today, the limit is "
                    f"{limits.tokens_per_day:,} (server.limits in the config); it resets at 00:00 UTC",
                    retry_after=max(1, math.ceil((midnight - now).total_seconds())),
                )
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

    def charge(self, user_id: int | None, usage: Usage) -> None:
        """Store a finished run's model tokens: they count against the user's day, and in their figures."""
        self._store.users.record_usage(
            user_id, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens
        )

    def tokens_today(self, user_id: int) -> int:
        used = self._store.users.usage(user_id, since=_start_of_day(datetime.now(UTC)))
        return used.input_tokens + used.output_tokens


def _start_of_day(moment: datetime) -> datetime:
    """00:00 UTC of `moment`'s day: when the tokens-per-day count starts."""
    return datetime.combine(moment.date(), datetime.min.time(), UTC)


class ChargingRecorder(RunRecorder):
    """A run's recorder that also charges the run's model tokens to its user."""

    def __init__(
        self,
        store: Store,
        limits: UsageLimits,
        *,
        chat_id: int | None,
        written: int,
        user_id: int | None,
        user: str | None,
    ) -> None:
        super().__init__(store, chat_id=chat_id, written=written, user_id=user_id)
        self._limits = limits
        self._user = user

    async def observe(self, event: AgentEvent) -> None:
        if isinstance(event, FinalEvent):
            await charge_usage(self._limits, self._user, self._user_id, event.result.usage)
        await super().observe(event)


async def charge_usage(limits: UsageLimits, user: str | None, user_id: int | None, usage: Usage) -> None:
    """Count a finished run's model tokens against the user's limit, and store them for their figures."""
    if user is None:
        return  # no users, or the token: nobody to charge
    try:
        await anyio.to_thread.run_sync(limits.charge, user_id, usage)
    except StoreError as error:  # the answer outweighs its record, as for the call log
        _log.debug("usage not recorded: %s", error)
