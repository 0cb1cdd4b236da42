"""A chat's event stream (`GET /api/chats/{id}/events`) on any replica: the run's event rows after the
stream's last id, read when the replica hears of new ones, as SSE frames whose `id` is the row's.

The replica that owns the run hands its own streams each batch of events as soon as it is written
(no read back); every other stream reads the rows when notified. A stream that falls far behind drops
what it was handed and reads the rows instead: nothing is lost, and nothing unbounded is held for it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterator, Sequence

import anyio

from toolbridge.store.runs import RunEvent, RunLedger
from toolbridge.telemetry import active_event_stream

__all__ = ["Follower", "follow_events"]

_HANDED_SLACK = 1000
"""Events handed to a stream that has not sent them yet; past that it reads rows instead."""
_ROWS_PER_READ = 500


class Follower:
    """One open event stream of a chat: where it is, and what it was handed or told since."""

    def __init__(self) -> None:
        self.last = 0
        """The id of the last event sent (set once the stream knows where it starts)."""
        self._handed: deque[tuple[int | None, str]] = deque()
        self._behind = True
        self._wake = anyio.Event()
        self.closed = False

    def _newest(self) -> int:
        ids = [event_id for event_id, _ in self._handed if event_id is not None]
        return max([self.last, *ids[-1:]])

    def hand(self, events: Sequence[RunEvent]) -> None:
        """The owner's events, just written."""
        if len(self._handed) + len(events) > _HANDED_SLACK:
            self._handed.clear()
            self._behind = True
        else:
            self._handed.extend((event.id or None, event.data) for event in events)  # 0: unstored
        self._wake.set()

    def hand_unstored(self, data: str) -> None:
        """An event of the server's own that has no run to be stored with (sent once, never replayed)."""
        self._handed.append((None, data))
        self._wake.set()

    def notice(self, last: int | None) -> None:
        """Rows up to id `last` exist (None: maybe some were missed; look)."""
        if last is None or last > self._newest():
            self._behind = True
            self._wake.set()

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    async def frames(self, ledger: RunLedger, chat_id: int, keepalive: float) -> AsyncIterator[str]:
        """SSE text until closed; a comment when nothing happened for `keepalive` seconds."""
        while not self.closed:
            with anyio.move_on_after(keepalive if math.isfinite(keepalive) else None):
                await self._wake.wait()
            if not self._wake.is_set():
                yield ": keep-alive\n\n"
                continue
            self._wake = anyio.Event()
            if self._behind:
                self._behind = False
                rows = await anyio.to_thread.run_sync(
                    lambda: ledger.events_after(chat_id, self.last, limit=_ROWS_PER_READ)
                )
                for row in rows:
                    if row.id > self.last:
                        self.last = row.id
                        yield _frame(row.id, row.data)
                if len(rows) == _ROWS_PER_READ:
                    self.notice(None)  # more rows than one read takes
            while self._handed:
                event_id, data = self._handed.popleft()
                if event_id is None:
                    yield _frame(None, data)
                elif event_id > self.last:
                    self.last = event_id
                    yield _frame(event_id, data)


def _frame(event_id: int | None, data: str) -> str:
    return f"data: {data}\n\n" if event_id is None else f"id: {event_id}\ndata: {data}\n\n"


async def follow_events(
    follower: Follower, ledger: RunLedger, chat_id: int, after: int | None, keepalive: float
) -> AsyncIterator[str]:
    """The stream of a follower already listening: from `after` (a `Last-Event-ID`), else from the
    start of the chat's run in progress (or only what comes next, when none is)."""
    with active_event_stream():
        yield ": connected\n\n"
        start = after if after is not None else await anyio.to_thread.run_sync(ledger.replay_start, chat_id)
        follower.last = start
        follower.notice(None)
        async for frame in follower.frames(ledger, chat_id, keepalive):
            yield frame
