"""Progress a server reports on a tool call (`notifications/progress`), as toolbridge hands it on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = ["ProgressHandler", "ToolProgress", "progress_label"]


@dataclass(frozen=True)
class ToolProgress:
    """One progress report: `progress` so far, of `total` when the server knows it."""

    progress: float
    total: float | None = None
    message: str | None = None

    @property
    def percent(self) -> int | None:
        """Whole percent done, when the total is known."""
        if not self.total:
            return None
        return max(0, min(100, int(self.progress * 100 / self.total)))

    def describe(self) -> str:
        """What a spinner shows (see `progress_label`)."""
        return progress_label(self.progress, self.percent, self.message)


def progress_label(progress: float, percent: int | None, message: str | None) -> str:
    """`40% reading sheet 2`, `40%`, `reading sheet 2` or `3`: the count of a report without a total is
    shown only when there is no message to say more (a task's status, counted by toolbridge, has none)."""
    if percent is not None:
        return f"{percent}% {message}" if message else f"{percent}%"
    return message or f"{progress:g}"


ProgressHandler = Callable[[ToolProgress], Awaitable[None]]
"""Told each progress report of one call (a report that does not advance on the last is dropped)."""
