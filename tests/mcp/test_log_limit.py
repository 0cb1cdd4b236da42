"""The rate limit on log lines a server causes, on a clock the test moves by hand."""

from __future__ import annotations

import logging

import pytest

from toolbridge.mcp._log_limit import RateLimitedLog


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_lines_beyond_the_limit_are_counted_and_reported_once_per_interval(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="test.limit")
    clock = ManualClock()
    log = RateLimitedLog(
        logging.getLogger("test.limit"),
        logging.INFO,
        source="server 's' stderr",
        limit=3,
        interval=10,
        clock=clock,
    )
    for n in range(50):
        log.log("line %d", n)
    assert [r.getMessage() for r in caplog.records] == ["line 0", "line 1", "line 2"]
    assert log.suppressed == 47
    caplog.clear()
    clock.now = 9.9  # still the same interval
    log.log("line 50")
    assert caplog.records == []
    clock.now = 10.0
    log.log("line 51")
    assert [r.getMessage() for r in caplog.records] == [
        "server 's' stderr: suppressed 48 lines (at most 3 are logged per 10 s)",
        "line 51",
    ]
    caplog.clear()
    log.report_suppressed()
    assert caplog.records == [], "nothing suppressed since the last report: nothing to say"
