"""When to start a server again that keeps failing to start: not on every use, but after a growing wait.

The first failure is retried on the next use (the user may just have fixed the command). From the
second failure in a row on, the next start waits 1 s, then 2, 4, ... up to a minute; a start that
works resets it. Uses within the wait get an error saying when the next attempt will be.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["StartBackoff"]

FIRST_WAIT = 1.0
LONGEST_WAIT = 60.0


class StartBackoff:
    """Counts a server's failed starts in a row and says how long the next start must wait."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.failures = 0
        """Failed starts in a row."""
        self._next_start = 0.0

    def failed(self) -> None:
        self.failures += 1
        wait = 0.0 if self.failures < 2 else min(FIRST_WAIT * 2 ** (self.failures - 2), LONGEST_WAIT)
        self._next_start = self._clock() + wait

    def succeeded(self) -> None:
        self.failures = 0
        self._next_start = 0.0

    def wait_left(self) -> float:
        """Seconds until the server may be started again (0: now)."""
        return max(0.0, self._next_start - self._clock())
