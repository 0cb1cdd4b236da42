"""Log lines a server can cause, rate-limited: a server printing in a tight loop must not flood the log.

At most `limit` lines per `interval` seconds are logged; the rest are counted, and the count is logged
as one line when the next interval begins (or when the log is closed).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["RateLimitedLog"]


class RateLimitedLog:
    """One source of log lines (a server's stderr, its stray stdout) with its own budget."""

    def __init__(
        self,
        logger: logging.Logger,
        level: int,
        *,
        source: str,
        limit: int = 20,
        interval: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._level = level
        self._source = source
        """What the lines come from, for the suppression line: "server 'x' stderr"."""
        self._limit = limit
        self._interval = interval
        self._clock = clock
        self._window_start = clock()
        self._logged = 0
        self.suppressed = 0
        """Lines not logged in the current interval, reported when it ends."""

    @property
    def enabled(self) -> bool:
        """Whether lines at this level would be logged at all (callers can skip preparing them)."""
        return self._logger.isEnabledFor(self._level)

    def log(self, message: str, *args: object, level: int | None = None) -> None:
        """Log one line at this source's level (or `level`), unless the interval's budget is spent."""
        now = self._clock()
        if now - self._window_start >= self._interval:
            self.report_suppressed()
            self._window_start, self._logged = now, 0
        if self._logged < self._limit:
            self._logged += 1
            self._logger.log(self._level if level is None else level, message, *args)
        else:
            self.suppressed += 1

    def report_suppressed(self) -> None:
        """Log how many lines were left out since the last report, if any were."""
        if self.suppressed:
            self._logger.log(
                self._level,
                "%s: suppressed %d lines (at most %d are logged per %g s)",
                self._source,
                self.suppressed,
                self._limit,
                self._interval,
            )
            self.suppressed = 0
