"""What the Stats page draws per tool: a latency histogram with percentiles, and calls over time.

Binned in Python from one query over the call log, like the percentiles in `_stats`, so SQLite and
PostgreSQL give the same figures without per-dialect date arithmetic. As in `_stats`, latencies are of
finished calls only (a declined call never ran, a cancelled one was cut short); calls over time count
every call.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session

from toolbridge.store._schema import ToolCallRow
from toolbridge.store._stats import calls_of, percentile, tool_key

__all__ = [
    "FINISHED_STATUSES",
    "LATENCY_BOUNDS",
    "MAX_TIME_BUCKETS",
    "CallsOverTime",
    "LatencyBucket",
    "LatencyDistribution",
    "ToolCharts",
    "time_bucket_seconds",
    "tool_charts",
]

LATENCY_BOUNDS: tuple[float, ...] = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
"""Upper bounds (seconds, inclusive) of the latency buckets; one more bucket holds everything slower."""

FINISHED_STATUSES = ("ok", "error")
"""The calls whose latency counts: they ran to an answer."""

MAX_TIME_BUCKETS = 48
"""At most this many bars in a calls-over-time chart: the bucket width grows with the period."""

_TIME_BUCKET_SECONDS = (60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400, 30 * 86400)


class _Chart(BaseModel):
    model_config = ConfigDict(frozen=True)


class LatencyBucket(_Chart):
    le: float | None
    """Upper bound in seconds (inclusive); None for the last bucket, which has none."""
    count: int


class LatencyDistribution(_Chart):
    """Every bucket of `LATENCY_BOUNDS`, empty ones included, so charts of different tools line up."""

    buckets: list[LatencyBucket]
    p50: float
    p90: float
    p99: float
    max: float


class CallsOverTime(_Chart):
    """`calls[i]` calls started in [start + i * bucket_seconds, start + (i + 1) * bucket_seconds)."""

    start: datetime
    bucket_seconds: int
    calls: list[int]


class ToolCharts(_Chart):
    tool: str
    server: str
    latency: LatencyDistribution
    calls_over_time: CallsOverTime


def time_bucket_seconds(span: timedelta) -> int:
    """The narrowest of a few round widths (1 min, 5 min, ... 30 days) that covers `span` in at most
    `MAX_TIME_BUCKETS` buckets."""
    for width in _TIME_BUCKET_SECONDS:
        # One bucket to spare: aligning the first bucket to the width can add one.
        if span.total_seconds() <= width * (MAX_TIME_BUCKETS - 1):
            return width
    return math.ceil(span.total_seconds() / (MAX_TIME_BUCKETS - 1))


def tool_charts(
    session: Session, since: datetime | None, *, now: datetime | None = None, user_id: int | None = None
) -> list[ToolCharts]:
    """Per tool and server with calls since `since` (all time if None), in no particular order.

    Every tool's calls-over-time covers the same buckets: from `since` (or the first call) to `now`,
    aligned to round multiples of the bucket width.
    """
    now = now or datetime.now(UTC)
    window = calls_of(since, user_id)
    key = tool_key()
    rows = session.execute(
        select(*key, ToolCallRow.duration, ToolCallRow.started_at, ToolCallRow.status)
        .where(*window)
        .order_by(ToolCallRow.duration)
    ).all()
    if not rows:
        return []

    first = since if since is not None else min(row.started_at for row in rows)
    width = time_bucket_seconds(max(now - first, timedelta(0)))
    origin = _floor_to(first, width)
    bucket_count = int((max(now, first) - origin).total_seconds() // width) + 1

    durations: dict[tuple[str, str], list[float]] = defaultdict(list)
    timelines: dict[tuple[str, str], list[int]] = {}
    for tool, server, duration, started_at, status in rows:
        if status in FINISHED_STATUSES:
            durations[tool, server].append(duration)
        timeline = timelines.setdefault((tool, server), [0] * bucket_count)
        index = int((started_at - origin).total_seconds() // width)
        timeline[min(max(index, 0), bucket_count - 1)] += 1  # a clock that went back stays on the chart

    return [
        ToolCharts(
            tool=tool,
            server=server,
            latency=_distribution(durations[tool, server]),
            calls_over_time=CallsOverTime(start=origin, bucket_seconds=width, calls=timeline),
        )
        for (tool, server), timeline in timelines.items()
    ]


def _distribution(sorted_durations: list[float]) -> LatencyDistribution:
    counts = [0] * (len(LATENCY_BOUNDS) + 1)
    for duration in sorted_durations:
        counts[bisect_left(LATENCY_BOUNDS, duration)] += 1
    bounds: list[float | None] = [*LATENCY_BOUNDS, None]
    return LatencyDistribution(
        buckets=[LatencyBucket(le=bound, count=count) for bound, count in zip(bounds, counts, strict=True)],
        p50=percentile(sorted_durations, 0.50),
        p90=percentile(sorted_durations, 0.90),
        p99=percentile(sorted_durations, 0.99),
        max=sorted_durations[-1] if sorted_durations else 0.0,
    )


def _floor_to(moment: datetime, seconds: int) -> datetime:
    epoch = moment.astimezone(UTC).timestamp()
    return datetime.fromtimestamp(epoch - epoch % seconds, UTC)
