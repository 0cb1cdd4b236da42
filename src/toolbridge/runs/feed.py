"""A chat's event streams (`GET /api/chats/{id}/events`) on any replica: the run's event rows after each
stream's last id, as SSE frames whose `id` is the row's.

The replica that owns the run hands its own streams each batch of events as soon as it is written (no
read back). Every other replica reads the rows when it hears of new ones: once per chat, however many
streams watch it (`ChatFeed`), each stream taking the rows after its own last id.

A stream reads rows on its own while it catches up: when it opens (from its `Last-Event-ID`, or the start
of the run in progress), and when it fell so far behind that it dropped what it was handed. It then joins
the shared read again. So a slow stream holds nobody back, loses nothing, and nothing unbounded is held
for it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterator, Sequence

import anyio

from toolbridge.runs.ledger import RunEvent, RunLedger
from toolbridge.telemetry import active_event_stream

__all__ = ["ChatFeed", "Follower", "follow_events"]

_HANDED_SLACK = 1000
"""Events handed to a stream that has not sent them yet; past that it reads rows on its own instead."""
_ROWS_PER_READ = 500


class Follower:
    """One open event stream of a chat: where it is, and what it was handed since."""

    def __init__(self) -> None:
        self.last = 0
        """The id of the last event sent (set once the stream knows where it starts)."""
        self.seen = 0
        """The newest stored event's id it sent or holds: where the shared read starts for it."""
        self.behind = True
        """It reads rows itself from `last` (it is new, or dropped what it was handed); the shared read
        hands it nothing meanwhile."""
        self._handed: deque[tuple[int | None, str]] = deque()
        self._wake = anyio.Event()
        self.closed = False

    def hand(self, events: Sequence[RunEvent]) -> None:
        """Events it may not have yet (stored ones it has are skipped)."""
        fresh = [(event.id or None, event.data) for event in events if not event.id or event.id > self.seen]
        if len(self._handed) + len(fresh) > _HANDED_SLACK:
            self._handed.clear()
            self.behind = True
        else:
            self._handed.extend(fresh)  # id 0: an event the database refused, sent once
            self.seen = max([self.seen, *(event_id for event_id, _ in fresh if event_id)])
        self.wake()

    def hand_unstored(self, data: str) -> None:
        """An event of the server's own that has no run to be stored with (sent once, never replayed)."""
        self._handed.append((None, data))
        self.wake()

    def wake(self) -> None:
        self._wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake()

    async def frames(
        self, feed: ChatFeed, ledger: RunLedger, chat_id: int, keepalive: float
    ) -> AsyncIterator[str]:
        """SSE text until closed; a comment when nothing happened for `keepalive` seconds."""
        while not self.closed:
            with anyio.move_on_after(keepalive if math.isfinite(keepalive) else None):
                await self._wake.wait()
            if not self._wake.is_set():
                yield ": keep-alive\n\n"
                continue
            self._wake = anyio.Event()
            if self.behind:
                rows = await anyio.to_thread.run_sync(
                    lambda: ledger.events_after(chat_id, self.last, limit=_ROWS_PER_READ)
                )
                for row in rows:
                    if row.id > self.last:
                        self.last = row.id
                        yield _frame(row.id, row.data)
                if len(rows) < _ROWS_PER_READ:
                    feed.rejoin(self)
                self.wake()  # read on, or take the shared read's rows from now on
            else:
                await feed.read(ledger, chat_id)
            while self._handed:
                event_id, data = self._handed.popleft()
                if event_id is None:
                    yield _frame(None, data)
                elif event_id > self.last:
                    self.last = event_id
                    yield _frame(event_id, data)


class ChatFeed:
    """One chat's open event streams on this replica, and the one read of new rows they share: one
    query per notice, whichever stream happens to run it, handed to every stream that is caught up."""

    def __init__(self) -> None:
        self.followers: set[Follower] = set()
        self._stale = False
        """Rows some caught-up stream lacks may exist: the next `read` looks."""
        self._reading = anyio.Lock()

    def add(self, follower: Follower) -> None:
        self.followers.add(follower)

    def discard(self, follower: Follower) -> None:
        self.followers.discard(follower)

    def _caught_up(self) -> list[Follower]:
        return [follower for follower in self.followers if not follower.behind]

    def hand(self, events: Sequence[RunEvent]) -> None:
        """The owner's events, just written: to the streams that are caught up (the others read them),
        and the ones the database refused to all (there is no row to read)."""
        unstored = [event for event in events if not event.id]
        for follower in self.followers:
            follower.hand(unstored if follower.behind else events)

    def hand_unstored(self, data: str) -> None:
        for follower in self.followers:
            follower.hand_unstored(data)

    def notice(self, last: int | None) -> None:
        """Rows up to id `last` exist (None: maybe some were missed; look)."""
        caught_up = self._caught_up()
        if last is None or not caught_up or last > min(follower.seen for follower in caught_up):
            self._mark_stale(caught_up)

    def rejoin(self, follower: Follower) -> None:
        """`follower` read every row there was when its own read began: the shared read serves it now.
        When its place differs from the others', the next read starts from the lowest, so both sides get
        what the other was given meanwhile (nothing falls between its read and the shared one)."""
        follower.behind = False
        follower.seen = follower.last
        caught_up = self._caught_up()
        if len({other.seen for other in caught_up}) > 1:
            self._mark_stale(caught_up)

    def _mark_stale(self, caught_up: list[Follower]) -> None:
        self._stale = True
        for follower in caught_up:
            follower.wake()

    async def read(self, ledger: RunLedger, chat_id: int) -> None:
        """When stale, read the rows after the furthest-behind caught-up stream's place, once, and hand
        them to every caught-up stream; streams that wait for the read meanwhile find it done."""
        async with self._reading:
            caught_up = self._caught_up()
            if not self._stale or not caught_up:
                return  # not stale, or the next stream to catch up looks (`rejoin` keeps it stale)
            self._stale = False
            after = min(follower.seen for follower in caught_up)
            try:
                rows = await anyio.to_thread.run_sync(
                    lambda: ledger.events_after(chat_id, after, limit=_ROWS_PER_READ)
                )
            except BaseException:
                self._mark_stale(self._caught_up())  # another stream reads instead (this one left or failed)
                raise
            for follower in self._caught_up():
                follower.hand(rows)
            if len(rows) == _ROWS_PER_READ:
                self._mark_stale(self._caught_up())  # more rows than one read takes


def _frame(event_id: int | None, data: str) -> str:
    return f"data: {data}\n\n" if event_id is None else f"id: {event_id}\ndata: {data}\n\n"


async def follow_events(
    follower: Follower, feed: ChatFeed, ledger: RunLedger, chat_id: int, after: int | None, keepalive: float
) -> AsyncIterator[str]:
    """The stream of a follower already in `feed`: from `after` (a `Last-Event-ID`), else from the start
    of the chat's run in progress (or only what comes next, when none is)."""
    with active_event_stream():
        yield ": connected\n\n"
        start = after if after is not None else await anyio.to_thread.run_sync(ledger.replay_start, chat_id)
        follower.last = follower.seen = start
        follower.wake()
        async for frame in follower.frames(feed, ledger, chat_id, keepalive):
            yield frame
