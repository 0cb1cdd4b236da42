"""Progress a server reports on a tool call (`notifications/progress`), as toolbridge hands it on."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

__all__ = ["ProgressHandler", "ToolProgress"]


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
        """`40% reading sheet 2`, `3 reading sheet 2` or `40%`: what a spinner shows."""
        amount = f"{self.percent}%" if self.percent is not None else f"{self.progress:g}"
        return f"{amount} {self.message}" if self.message else amount


ProgressHandler = Callable[[ToolProgress], Awaitable[None]]
"""Told each progress report of one call (a report that does not advance on the last is dropped)."""
