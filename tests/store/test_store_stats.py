"""The tool-call log and its statistics, on known data; `--since` parsing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event
from store_helpers import NOW, check_every_outcome, entry, log_every_outcome

from toolbridge.store import Store, StoreError, ToolCallLogEntry, parse_since, percentile
from toolbridge.tools.cache import argument_hash
from toolbridge.types import TextPart, ToolCall, ToolResult


def test_percentiles_interpolate_between_ranks() -> None:
    values = [float(n) for n in range(1, 101)]
    assert percentile(values, 0.50) == pytest.approx(50.5)
    assert percentile(values, 0.95) == pytest.approx(95.05)
    assert percentile([3.0], 0.95) == 3.0
    assert percentile([], 0.5) == 0.0


def test_stats_per_tool_and_server(store: Store) -> None:
    # add on basic: 20 calls of 0.1 s ... 2.0 s, three of them errors, five cache hits.
    for n in range(1, 21):
        status = "error" if n in (4, 9, 15) else "ok"
        error = f"failure number {n}" if status == "error" else None
        store.log_tool_call(
            entry("add", "basic", n / 10, minutes_ago=100 - n, status=status, error=error, cache_hit=n <= 5)
        )
    # The same tool name on another server is counted apart.
    store.log_tool_call(
        entry(
            "add",
            "other",
            0.5,
            minutes_ago=30,
            status="error",
            error_kind="timeout",
            error="timed out after 30 s",
        )
    )
    store.log_tool_call(
        entry("ask", "native", 0.01, minutes_ago=5, status="denied", error="the user declined")
    )

    stats = {(s.tool, s.server): s for s in store.tool_stats()}
    add = stats["add", "basic"]
    assert (add.calls, add.succeeded, add.cache_hits) == (20, 17, 5)
    assert add.success_rate == pytest.approx(0.85)
    assert add.p50 == pytest.approx(1.05)
    assert add.p95 == pytest.approx(1.905)
    assert add.last_error == "failure number 15"
    assert add.last_error_at == NOW - timedelta(minutes=85)
    assert add.last_called == NOW - timedelta(minutes=80)

    other = stats["add", "other"]
    assert (other.calls, other.succeeded, other.success_rate) == (1, 0, 0.0)
    assert other.last_error == "timed out after 30 s"
    assert stats["ask", "native"].last_error is None  # declining is not a failure of the tool
    assert next(iter(stats)) == ("add", "basic")  # busiest first

    recent = {(s.tool, s.server): s for s in store.tool_stats(since=NOW - timedelta(minutes=84, seconds=30))}
    assert recent["add", "basic"].calls == 5  # minutes_ago 84 ... 80
    assert recent["add", "basic"].last_error is None
    assert set(recent) == {("add", "basic"), ("add", "other"), ("ask", "native")}
    assert store.tool_stats(since=NOW + timedelta(seconds=1)) == []


def test_declined_and_cancelled_calls_are_counted_apart_from_failures(store: Store) -> None:
    log_every_outcome(store)
    check_every_outcome(store)


def test_a_tool_only_ever_declined_has_no_success_rate(store: Store) -> None:
    call = ToolCall(name="delete", arguments={}, id="c1")
    declined = ToolResult.error("c1", "declined", kind="denied", server="files")
    store.log_tool_call(ToolCallLogEntry.from_result(call, declined, started_at=NOW))
    [delete] = store.tool_stats()
    assert (delete.calls, delete.denied, delete.success_rate) == (1, 1, None)


def test_the_log_keeps_the_error_kind_not_message_text(store: Store) -> None:
    call = ToolCall(name="slow", arguments={}, id="c1")
    # A message that mentions no timeout at all: the kind decides, not the text.
    result = ToolResult.error("c1", "no answer", kind="timeout", server="basic")
    entry_ = ToolCallLogEntry.from_result(call, result, started_at=NOW)
    assert (entry_.status, entry_.error_kind) == ("error", "timeout")
    declined = ToolCallLogEntry.from_result(
        call, ToolResult.error("c1", "timed out", kind="denied"), started_at=NOW
    )
    assert (declined.status, declined.error_kind) == ("denied", "denied")


def test_log_entry_from_a_call_and_its_result(store: Store) -> None:
    call = ToolCall(name="read", arguments={"b": 2, "a": [1, "ü"]}, id="call_9")
    failed = ToolResult(
        call_id="call_9",
        content=[TextPart(text="no such file")],
        is_error=True,
        server="files",
        duration=0.25,
    )
    logged = ToolCallLogEntry.from_result(call, failed, started_at=NOW, chat_id=None)
    assert logged.status == "error"
    assert logged.error == "no such file"
    assert logged.server == "files"
    assert logged.duration == 0.25
    assert logged.argument_hash == argument_hash({"a": [1, "ü"], "b": 2})  # key order does not matter

    hit = ToolCallLogEntry.from_result(
        call, ToolResult(call_id="call_9", server="files", cached=True), started_at=NOW
    )
    assert (hit.status, hit.error, hit.cache_hit) == ("ok", None, True)
    timed_out = ToolCallLogEntry.from_result(
        call, ToolResult.error("call_9", "timed out", kind="timeout"), started_at=NOW
    )
    assert (timed_out.status, timed_out.error_kind, timed_out.server) == ("error", "timeout", "")

    for logged_entry in (logged, hit, timed_out):
        store.log_tool_call(logged_entry)
    (read_files, read_unrouted) = sorted(store.tool_stats(), key=lambda s: s.server, reverse=True)
    assert (read_files.calls, read_files.cache_hits, read_files.succeeded) == (2, 1, 1)
    assert read_unrouted.last_error == "timed out"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", NOW - timedelta(minutes=30)),
        ("1h", NOW - timedelta(hours=1)),
        ("7d", NOW - timedelta(days=7)),
        ("2w", NOW - timedelta(weeks=2)),
        ("1.5h", NOW - timedelta(minutes=90)),
        ("2025-05-01", datetime(2025, 5, 1, tzinfo=UTC)),
        ("2025-05-01T08:30:00+02:00", datetime(2025, 5, 1, 6, 30, tzinfo=UTC)),
    ],
)
def test_since_accepts_durations_and_iso_times(text: str, expected: datetime) -> None:
    assert parse_since(text, now=NOW) == expected


def test_since_rejects_anything_else_with_examples() -> None:
    with pytest.raises(StoreError, match="7d"):
        parse_since("last tuesday", now=NOW)


def test_several_calls_are_logged_in_one_transaction(store: Store) -> None:
    commits: list[object] = []
    event.listen(store._writer, "commit", commits.append)  # one commit per transaction
    store.log_tool_calls([entry("add", "basic", 0.1, minutes) for minutes in range(5)])
    store.log_tool_calls([])  # nothing to write: no transaction
    assert len(commits) == 1
    [add] = store.tool_stats()
    assert add.calls == 5


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_tool_called_by_its_qualified_name_is_one_row_with_its_bare_name(
    backend: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue("db_url" if backend == "sqlite" else "pg_url")
    with Store(url) as store:
        _one_row_per_tool(store)


def _one_row_per_tool(store: Store) -> None:
    # The model may call `time__get_current_time` or `get_current_time`: the same tool of server time.
    store.log_tool_call(entry("time__get_current_time", "time", 0.2, minutes_ago=3))
    store.log_tool_call(entry("get_current_time", "time", 0.4, minutes_ago=2))
    # Another server's prefix, or a name that only looks qualified, stays as it is.
    store.log_tool_call(entry("time__get_current_time", "clock", 0.1, minutes_ago=1))
    store.log_tool_call(entry("time_zone", "time", 0.1, minutes_ago=1))

    stats = {(s.tool, s.server): s.calls for s in store.tool_stats()}
    assert stats == {
        ("get_current_time", "time"): 2,
        ("time__get_current_time", "clock"): 1,
        ("time_zone", "time"): 1,
    }
    charts = {(c.tool, c.server): sum(c.calls_over_time.calls) for c in store.tool_charts()}
    assert charts == stats
