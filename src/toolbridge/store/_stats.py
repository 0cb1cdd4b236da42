"""Tool-call statistics: counts in SQL, percentiles in Python (portable across backends), and `--since`."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from toolbridge.store._errors import StoreError
from toolbridge.store._records import ToolStats
from toolbridge.store._schema import ToolCallRow
from toolbridge.types import QUALIFIER

__all__ = ["calls_of", "parse_since", "percentile", "tool_stats"]

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_since(text: str, *, now: datetime | None = None) -> datetime:
    """`30m`, `1h`, `7d`, `2w` before `now`, or an ISO date or time (a time without zone is UTC)."""
    now = now or datetime.now(UTC)
    relative = _RELATIVE.match(text)
    if relative:
        amount, unit = relative.groups()
        try:
            return now - timedelta(**{_UNITS[unit]: float(amount)})
        except OverflowError:  # 99999999999d: before the year 1, which datetime cannot hold
            raise StoreError(
                f"{text!r} reaches back before the year 1; use a shorter span, or leave it out for all calls"
            ) from None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise StoreError(
            f"cannot read {text!r} as a time: use 30m, 1h, 7d, 2w or an ISO date like 2025-01-31"
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default); 0.0 for no values."""
    if not sorted_values:
        return 0.0
    rank = (len(sorted_values) - 1) * fraction
    low, high = math.floor(rank), math.ceil(rank)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (rank - low)


def calls_of(since: datetime | None, user_id: int | None) -> list[ColumnElement[bool]]:
    """The conditions for the calls since `since` (None: all) by user `user_id` (None: anyone's)."""
    window = [ToolCallRow.started_at >= since] if since is not None else []
    return window + ([ToolCallRow.user_id == user_id] if user_id is not None else [])


def tool_key() -> tuple[ColumnElement[str], InstrumentedAttribute[str]]:
    """(tool, server) to group calls by: a name the model qualified with its own server's
    (`time__get_current_time` on server `time`) counts as the tool's bare name, so one tool is one row
    however it was called."""
    tool, server = ToolCallRow.tool, ToolCallRow.server
    prefix = server + QUALIFIER
    qualified = func.substr(tool, 1, func.length(prefix)) == prefix
    bare = func.substr(tool, func.length(prefix) + 1)
    name: ColumnElement[str] = case((qualified, bare), else_=tool).label("tool_name")
    return name, server


def _count(status: str) -> ColumnElement[int]:
    return func.sum(case((ToolCallRow.status == status, 1), else_=0))


def tool_stats(session: Session, since: datetime | None, *, user_id: int | None = None) -> list[ToolStats]:
    """Per tool and server, busiest first. Latencies and the last error are of finished calls only: a
    declined call never ran, and a cancelled one was cut short."""
    window = calls_of(since, user_id)
    finished = ToolCallRow.status.in_(("ok", "error"))
    key = tool_key()

    totals = session.execute(
        select(
            *key,
            func.count(),
            _count("ok"),
            _count("error"),
            _count("denied"),
            _count("cancelled"),
            func.sum(case((ToolCallRow.cache_hit, 1), else_=0)),
            func.max(ToolCallRow.started_at),
        )
        .where(*window)
        .group_by(*key)
    ).all()

    durations: dict[tuple[str, str], list[float]] = defaultdict(list)
    for tool, server, duration in session.execute(
        select(*key, ToolCallRow.duration).where(*window, finished).order_by(ToolCallRow.duration)
    ):
        durations[tool, server].append(duration)

    last_errors: dict[tuple[str, str], tuple[str | None, datetime]] = {}
    for tool, server, error, started_at in session.execute(
        select(*key, ToolCallRow.error, ToolCallRow.started_at)
        .where(*window, ToolCallRow.status == "error")
        .order_by(ToolCallRow.started_at.desc(), ToolCallRow.id.desc())
    ):
        last_errors.setdefault((tool, server), (error, started_at))

    callers: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for tool, server, caller, count in session.execute(
        select(*key, ToolCallRow.caller, func.count())
        .where(*window)
        .group_by(*key, ToolCallRow.caller)
        .order_by(func.count().desc(), ToolCallRow.caller)
    ):
        callers[tool, server][caller] = count

    stats = []
    for tool, server, calls, succeeded, failed, denied, cancelled, cache_hits, last_called in totals:
        latencies = durations[tool, server]
        error, error_at = last_errors.get((tool, server), (None, None))
        stats.append(
            ToolStats(
                tool=tool,
                server=server,
                calls=calls,
                succeeded=int(succeeded or 0),
                failed=int(failed or 0),
                denied=int(denied or 0),
                cancelled=int(cancelled or 0),
                cache_hits=int(cache_hits or 0),
                p50=percentile(latencies, 0.50),
                p95=percentile(latencies, 0.95),
                last_called=_aware(last_called),
                last_error=error,
                last_error_at=error_at,
                callers=callers[tool, server],
            )
        )
    return sorted(stats, key=lambda s: (-s.calls, s.tool, s.server))


def _aware(value: datetime | str) -> datetime:
    # max() over a TypeDecorator column keeps the type on PostgreSQL, but SQLite may hand back text.
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
