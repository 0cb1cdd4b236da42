"""The owner's side of a run's events: each one written as a row, then handed to this replica's streams
and announced to the others.

Events queue while the previous insert runs and the next insert takes them all, so a burst of token
deltas costs one transaction, not one each, and the run never waits for the database.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import anyio

from toolbridge.errors import StoreError
from toolbridge.runs.ledger import RunEvent, RunLedger, RunStatus

__all__ = ["UNSTORED", "EventWriter"]

logger = logging.getLogger(__name__)

UNSTORED = 0
"""The id of an event the database refused: sent to this replica's streams once, never replayed."""

Deliver = Callable[[Sequence[RunEvent]], None]


class EventWriter:
    """Run `run_id`'s events, written in order by `run()` until `stop()`; `end()` writes the last ones
    with the run's status."""

    def __init__(
        self, ledger: RunLedger, run_id: str, chat_id: int, deliver: Deliver, *, replica: str | None = None
    ) -> None:
        self._ledger = ledger
        self._replica = replica
        """The owner writing: once another replica took the run over, nothing more is written."""
        self._run_id = run_id
        self._chat_id = chat_id
        self._deliver = deliver
        self._queued: list[str] = []
        self._ready = anyio.Event()
        self._stopping = False
        self._disowned = False

    def disown(self) -> None:
        """The run is no longer this replica's (reaped, or taken over by another): nothing more of it is
        written or delivered, its end included."""
        self._disowned = True

    def put(self, data: str) -> None:
        self._queued.append(data)
        self._ready.set()

    def stop(self) -> None:
        """`run()` writes what is queued and returns."""
        self._stopping = True
        self._ready.set()

    async def run(self) -> None:
        while True:
            await self._ready.wait()
            self._ready = anyio.Event()
            batch, self._queued = self._queued, []
            if batch:
                await self._write(batch)
            if self._stopping and not self._queued:
                return

    async def _write(self, batch: list[str]) -> None:
        if self._disowned:
            return
        try:
            written = await anyio.to_thread.run_sync(
                lambda: self._ledger.append(self._run_id, self._chat_id, batch, replica=self._replica)
            )
        except StoreError as error:
            logger.error(
                "cannot store %d event(s) of run %s (%s): this replica's streams get them, other "
                "replicas' and reconnecting streams miss them",
                len(batch),
                self._run_id,
                error,
            )
            written = self._unstored(batch)
        self._deliver(written)

    async def end(self, status: RunStatus, last: Sequence[str], before_delivery: Callable[[], None]) -> None:
        """Write what is still queued and `last`, and end the run with `status`, in one transaction;
        `before_delivery` runs once the run is over in the database, before any stream sees `last`."""
        events = [*self._queued, *last]
        self._queued = []
        if self._disowned:
            before_delivery()
            return
        try:
            written = await anyio.to_thread.run_sync(
                lambda: self._ledger.end(self._run_id, status, events, replica=self._replica)
            )
        except StoreError as error:
            logger.error("cannot store the end of run %s (%s): %s", self._run_id, status, error)
            written = self._unstored(events)
        before_delivery()
        self._deliver(written)

    def _unstored(self, events: Sequence[str]) -> list[RunEvent]:
        return [RunEvent(id=UNSTORED, chat_id=self._chat_id, run_id=self._run_id, data=d) for d in events]
