"""The Stats page's charts from the store: latency histograms with percentiles and calls over time, the
same on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from store_helpers import NOW, entry

from toolbridge.store import Store, ToolCharts
from toolbridge.store._charts import LATENCY_BOUNDS, MAX_TIME_BUCKETS, time_bucket_seconds


@pytest.fixture(params=["sqlite", "postgresql"])
def backend_store(request: pytest.FixtureRequest, db_url: str) -> Iterator[Store]:
    url = db_url if request.param == "sqlite" else request.getfixturevalue("pg_url")
    with Store(url) as store:
        yield store


def charts_by_tool(store: Store, since: datetime | None = None) -> dict[tuple[str, str], ToolCharts]:
    return {(c.tool, c.server): c for c in store.tool_charts(since=since, now=NOW)}


def test_latency_buckets_and_percentiles_per_tool(backend_store: Store) -> None:
    # add on basic: 3 calls within 10 ms, 2 up to 0.1 s, 1 exactly on the 1 s bound, 1 slower than 30 s.
    for minutes_ago, duration in enumerate([0.001, 0.005, 0.01, 0.07, 0.1, 1.0, 45.0]):
        backend_store.log_tool_call(entry("add", "basic", duration, minutes_ago=minutes_ago + 1))
    backend_store.log_tool_call(entry("add", "other", 0.3, minutes_ago=1))

    charts = charts_by_tool(backend_store)
    latency = charts["add", "basic"].latency
    assert [bucket.le for bucket in latency.buckets] == [*LATENCY_BOUNDS, None]
    counts = {bucket.le: bucket.count for bucket in latency.buckets if bucket.count}
    assert counts == {0.01: 3, 0.1: 2, 1.0: 1, None: 1}
    assert latency.p50 == pytest.approx(0.07)
    assert latency.p90 == pytest.approx(1.0 + (45.0 - 1.0) * 0.4)
    assert latency.max == 45.0
    other = charts["add", "other"].latency
    assert {b.le: b.count for b in other.buckets if b.count} == {0.5: 1}
    assert other.p50 == other.p99 == other.max == 0.3


def test_declined_and_cancelled_calls_count_over_time_but_not_in_latencies(backend_store: Store) -> None:
    backend_store.log_tool_call(entry("write", "files", 0.2, minutes_ago=3))
    backend_store.log_tool_call(
        entry("write", "files", 0.0, minutes_ago=2, status="denied", error="declined")
    )
    backend_store.log_tool_call(
        entry("write", "files", 9.0, minutes_ago=1, status="cancelled", error="stopped")
    )
    backend_store.log_tool_call(
        entry("delete", "files", 0.0, minutes_ago=1, status="denied", error="declined")
    )

    charts = charts_by_tool(backend_store, since=NOW - timedelta(minutes=15))
    write = charts["write", "files"]
    assert {b.le: b.count for b in write.latency.buckets if b.count} == {0.25: 1}
    assert write.latency.max == 0.2
    assert sum(write.calls_over_time.calls) == 3
    never_ran = charts["delete", "files"]
    assert sum(b.count for b in never_ran.latency.buckets) == 0
    assert (never_ran.latency.p50, never_ran.latency.max) == (0.0, 0.0)
    assert sum(never_ran.calls_over_time.calls) == 1


def test_calls_over_time_share_buckets_across_tools(backend_store: Store) -> None:
    # The last hour in 5-minute buckets: 12:00 is the 13th bucket's start, so there are 13 of them.
    for minutes_ago in (59, 58, 31, 1, 0):
        backend_store.log_tool_call(entry("add", "basic", 0.1, minutes_ago=minutes_ago))
    backend_store.log_tool_call(entry("echo", "basic", 0.1, minutes_ago=30))
    backend_store.log_tool_call(entry("add", "basic", 0.1, minutes_ago=61))  # before the period

    charts = charts_by_tool(backend_store, since=NOW - timedelta(hours=1))
    add, echo = charts["add", "basic"].calls_over_time, charts["echo", "basic"].calls_over_time
    assert add.start == echo.start == NOW - timedelta(hours=1)
    assert add.bucket_seconds == echo.bucket_seconds == 300
    assert add.calls == [2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1]  # 11:29 is in 11:25-11:30
    assert echo.calls == [0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]

    # All time: from the first call's (aligned) bucket to now.
    everything = charts_by_tool(backend_store)["add", "basic"].calls_over_time
    assert everything.start == NOW - timedelta(minutes=65)
    assert sum(everything.calls) == 6
    assert backend_store.tool_charts(since=NOW + timedelta(minutes=1), now=NOW) == []


@pytest.mark.parametrize(
    ("span", "width"),
    [
        (timedelta(minutes=15), 60),
        (timedelta(hours=1), 300),
        (timedelta(hours=24), 3600),
        (timedelta(days=7), 6 * 3600),
        (timedelta(days=30), 86400),
        (timedelta(days=3000), 5_514_894),
    ],
)
def test_time_buckets_widen_with_the_period(span: timedelta, width: int) -> None:
    assert time_bucket_seconds(span) == width
    assert span.total_seconds() / width <= MAX_TIME_BUCKETS - 1
