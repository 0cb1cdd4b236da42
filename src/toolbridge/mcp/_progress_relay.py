"""Between the SDK and a call's `on_progress`: stale reports dropped, the deadline moved on each one."""

from __future__ import annotations

import math

from toolbridge.mcp.calls_in_flight import CallDeadline
from toolbridge.mcp.progress import ProgressHandler, ToolProgress

__all__ = ["ProgressRelay"]


class ProgressRelay:
    """Hands a call's progress reports on, and moves its deadline when the timeout resets on them."""

    def __init__(self, handler: ProgressHandler | None, deadline: CallDeadline | None, timeout: float):
        self._handler = handler
        self._deadline = deadline
        self._timeout = timeout
        self._last = -math.inf
        self._closed = False

    def close(self) -> None:
        """The call has ended: reports still on their way are dropped."""
        self._closed = True

    async def relay(self, progress: float, total: float | None, message: str | None) -> None:
        # The SDK runs each report in its own task; one that does not advance is stale (or bogus).
        if self._closed or progress <= self._last:
            return
        self._last = progress
        if self._deadline is not None:
            self._deadline.move(self._timeout)
        if self._handler is not None:
            await self._handler(ToolProgress(progress, total, message))
