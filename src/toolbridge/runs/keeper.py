"""Keeping runs honest across replicas, one task per replica: the owner renews its runs' leases every
third of a lease and acts on the signals other replicas left for them (at once when notified, and on
every renewal in case a notice was lost); every replica reaps the runs of replicas that died, and
takes over those that died waiting for a task (`toolbridge.runs.takeover`) instead of ending them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Protocol

import anyio

from toolbridge.errors import StoreError
from toolbridge.runs.ledger import EventsNotice, Notice, RunLedger, RunSignal, SignalsNotice
from toolbridge.runs.notifier import RunNotifier
from toolbridge.runs.takeover import TakenRun
from toolbridge.store._schema import utcnow

__all__ = ["OwnedRuns", "RunKeeper"]

logger = logging.getLogger(__name__)

_LONGEST_REAP_INTERVAL = 5.0


class OwnedRuns(Protocol):
    def owned_runs(self) -> Sequence[str]:
        """The ids of the runs in progress on this replica."""

    def apply_signal(self, signal: RunSignal) -> None:
        """Act on what another replica asked of one of them."""

    def run_lost(self, run_id: str) -> None:
        """Another replica reaped it (this one failed to renew in time): stop it."""

    def take_over(self, taken: TakenRun) -> None:
        """Run from now on a run whose replica died waiting for a task: it is this replica's already
        (`owned_runs` must name it at once, or its lease runs out again)."""


class RunKeeper:
    def __init__(
        self, ledger: RunLedger, notifier: RunNotifier, owner: OwnedRuns, *, replica: str, lease: float
    ) -> None:
        self._ledger = ledger
        self._notifier = notifier
        self._owner = owner
        self._replica = replica
        self._lease = lease
        self._signals_due = anyio.Event()
        self._handled: dict[str, set[int]] = {}
        """Per owned run, the signals acted on (ids, not a high-water mark: two replicas' signals may
        commit out of id order)."""
        notifier.add(self._heard)

    def _heard(self, notice: Notice | None) -> None:
        if notice is None or (
            isinstance(notice, SignalsNotice) and notice.run_id in self._owner.owned_runs()
        ):
            self._signals_due.set()

    async def run(self) -> None:
        renew_every = self._lease / 3
        reap_every = min(self._lease / 2, _LONGEST_REAP_INTERVAL)
        next_renewal = time.monotonic() + renew_every
        next_reaping = time.monotonic()
        while True:
            with anyio.move_on_after(max(0.0, min(next_renewal, next_reaping) - time.monotonic())):
                await self._signals_due.wait()
            self._signals_due = anyio.Event()
            now = time.monotonic()
            owned = list(self._owner.owned_runs())
            if now >= next_renewal:
                next_renewal = now + renew_every
                owned = await self._renew(owned)
            await self._read_signals(owned)
            if now >= next_reaping:
                next_reaping = now + reap_every
                await self._reap()

    async def _renew(self, owned: list[str]) -> list[str]:
        try:
            kept = await anyio.to_thread.run_sync(
                lambda: self._ledger.renew(self._replica, owned, lease=self._lease)
            )
        except StoreError as error:  # a database outage must not end the server: try again next time
            logger.warning(
                "cannot renew the leases of %d run(s) (%s); retrying, but once %.0f s pass without a "
                "renewal other replicas mark them interrupted",
                len(owned),
                error,
                self._lease,
            )
            return owned
        for run_id in owned:
            if run_id not in kept:
                logger.warning(
                    "run %s was taken over or marked interrupted by another replica (this one did not "
                    "renew its lease in time): stopping it here",
                    run_id,
                )
                self._owner.run_lost(run_id)
        return [run_id for run_id in owned if run_id in kept]

    async def _read_signals(self, owned: list[str]) -> None:
        self._handled = {run_id: self._handled.get(run_id, set()) for run_id in owned}
        if not owned:
            return
        try:
            signals = await anyio.to_thread.run_sync(self._ledger.signals_after, owned, 0)
        except StoreError as error:
            logger.warning("cannot read the signals of %d run(s): %s", len(owned), error)
            return
        for signal in signals:
            handled = self._handled.setdefault(signal.run_id, set())
            if signal.id not in handled:
                handled.add(signal.id)
                self._owner.apply_signal(signal)

    async def _reap(self) -> None:
        now = utcnow()  # the same for both: a run waiting for a task is taken over, never reaped
        try:
            taken = await anyio.to_thread.run_sync(
                lambda: self._ledger.take_over_tasks(self._replica, lease=self._lease, now=now)
            )
        except StoreError as error:
            logger.warning("cannot look for runs of replicas that stopped: %s", error)
            return
        for run in taken:
            logger.warning(
                "run %s of chat %d: the replica running it stopped while %d task(s) ran; taking it over",
                run.run_id,
                run.chat_id,
                len(run.tasks),
            )
            self._owner.take_over(run)
        try:
            # Never its own runs in progress: they are alive, however late a renewal on a loaded machine.
            mine = set(self._owner.owned_runs())
            interrupted = await anyio.to_thread.run_sync(lambda: self._ledger.reap(now, sparing=mine))
        except StoreError as error:
            logger.warning("cannot look for runs of replicas that stopped: %s", error)
            return
        for event in interrupted:
            logger.warning(
                "run %s of chat %d was interrupted: the replica running it stopped renewing its lease",
                event.run_id,
                event.chat_id,
            )
        self._notifier.announce(EventsNotice(event.chat_id, event.id) for event in interrupted)
