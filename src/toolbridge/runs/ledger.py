"""Chats' runs as rows, so that any number of `toolbridge serve` replicas on one database
act as one: which replica owns a run (with a lease it renews), the run's events in the order its streams
send them, and what other replicas ask of its owner (cancel, approve, deny, answer a server's question).

    ledger = RunLedger.of(store)
    run = ledger.claim("r1", chat_id, replica="host:123:ab", lease=30)   # RunConflictError if one runs
    written = ledger.append("r1", chat_id, ['{"type": "text_delta", ...}'])   # one transaction
    ledger.events_after(chat_id, after=written[-1].id)
    ledger.end("r1", "completed", ['{"type": "final", ...}'])
    ledger.take_over_tasks("host:456:cd", lease=30)   # runs whose lease ran out waiting for a task
    ledger.reap()                  # the others whose lease ran out: `interrupted`, with a run_interrupted event

On PostgreSQL every write that others should hear of sends a `NOTIFY` on `channel()` in its own
transaction (delivered when it commits; see `toolbridge.runs.notifier`). A notice only says where to
look: the rows are the truth.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from sqlalchemy import ColumnElement, Select, delete, func, insert, or_, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from toolbridge.runs.notices import EventsNotice, Notice, SignalsNotice, parse_notice, payload
from toolbridge.runs.takeover import TASK_STARTED, TakenRun, run_resumed_event, unfinished_tasks
from toolbridge.store._errors import ChatNotFoundError, StoreError
from toolbridge.store._schema import ChatRow, RunEventRow, RunRow, RunSignalRow, utcnow

if TYPE_CHECKING:
    from toolbridge.store.store import Store

__all__ = [
    "INTERRUPTED_MESSAGE",
    "EventsNotice",
    "Notice",
    "RunConflictError",
    "RunEvent",
    "RunLedger",
    "RunRecord",
    "RunSignal",
    "RunStatus",
    "SignalKind",
    "SignalsNotice",
    "parse_notice",
    "payload",
]

RunStatus = Literal["running", "completed", "cancelled", "failed", "interrupted"]
SignalKind = Literal["cancel", "approve", "allow", "deny", "answer"]
"""`allow`: approve the call, and the chat's later calls of its tool without asking."""
INTERRUPTED_MESSAGE = "interrupted: the server running it stopped; its completed steps are kept"

Sessions = Callable[[], AbstractContextManager[Session]]


class RunConflictError(StoreError):
    """The chat already has a run in progress (on this replica or another)."""

    def __init__(self, chat_id: int, running: str | None) -> None:
        self.chat_id = chat_id
        self.running = running
        super().__init__(
            f"chat {chat_id} is still answering (run {running or 'unknown'}); wait for its final event"
        )


@dataclass(frozen=True)
class RunRecord:
    id: str
    chat_id: int
    replica: str
    status: RunStatus
    started_at: datetime
    lease_until: datetime
    ended_at: datetime | None


@dataclass(frozen=True)
class RunEvent:
    id: int
    """Ordered within a chat; the SSE event id a reconnecting stream resumes after."""
    chat_id: int
    run_id: str
    data: str


@dataclass(frozen=True)
class RunSignal:
    id: int
    run_id: str
    kind: SignalKind
    call_id: str | None
    """The call approved or denied; the server's question (its request id) answered."""
    payload: str | None = field(default=None, repr=False)
    """An answer's JSON; never in a repr, so never in a log (a form may have asked for a secret)."""


class RunLedger:
    """Chats' runs, their events and signals, shared by the replicas on one database (`RunLedger.of(store)`): each
    method is one short transaction; times are this machine's clock."""

    def __init__(self, read: Sessions, write: Sessions, *, postgresql: bool) -> None:
        self._read = read
        self._write = write
        self._postgresql = postgresql
        self._channel: str | None = None

    @classmethod
    def of(cls, store: Store) -> RunLedger:
        return cls(store.reading, store.writing, postgresql=store.postgresql)

    @property
    def shared(self) -> bool:
        """Whether other processes may run on this database too (PostgreSQL; SQLite serves one)."""
        return self._postgresql

    def channel(self) -> str | None:
        """The NOTIFY channel of this database and schema (two deployments sharing a server, or tests
        using schemas of one database, must not hear each other); None on SQLite."""
        if not self._postgresql:
            return None
        if self._channel is None:
            with self._read() as session:
                database, schema = session.execute(text("SELECT current_database(), current_schema()")).one()
            digest = hashlib.sha256(f"{database}\0{schema}".encode()).hexdigest()[:24]
            self._channel = f"toolbridge_runs_{digest}"
        return self._channel

    def _notify(self, session: Session, notices: Iterable[Notice]) -> None:
        if not self._postgresql:
            return
        channel = self.channel()
        for notice in notices:
            session.execute(
                text("SELECT pg_notify(:channel, :payload)"),
                {"channel": channel, "payload": payload(notice)},
            )

    # -- owning a run ------------------------------------------------------------------------------------

    def claim(self, run_id: str, chat_id: int, *, replica: str, lease: float) -> RunRecord:
        """A new `running` run of the chat owned by `replica` (the events of runs before the last go).
        Raises `RunConflictError` when the chat has one already (the partial unique index decides,
        whichever replica asks), `ChatNotFoundError`."""
        now = utcnow()
        try:
            with self._write() as session:
                if session.get(ChatRow, chat_id) is None:
                    raise ChatNotFoundError(chat_id)
                row = RunRow(
                    id=run_id,
                    chat_id=chat_id,
                    replica=replica,
                    status="running",
                    started_at=now,
                    lease_until=now + timedelta(seconds=lease),
                )
                session.add(row)
                session.flush()
                self._forget_old_events(session, chat_id)
                return _record(row)
        except IntegrityError:
            current = self.current(chat_id)
            raise RunConflictError(chat_id, current.id if current else None) from None

    @staticmethod
    def _forget_old_events(session: Session, chat_id: int) -> None:
        """Drop the events of the chat's runs before its latest: streams replay the current run (or
        resume within the one before), and every token of every answer would otherwise stay forever.
        The latest run's events stay also so that SQLite, which reuses the ids above the highest row,
        never hands out an id a stream has already seen."""
        newest = session.execute(
            select(RunEventRow.run_id)
            .where(RunEventRow.chat_id == chat_id)
            .order_by(RunEventRow.id.desc())
            .limit(1)
        ).scalar()
        if newest is not None:
            session.execute(
                delete(RunEventRow).where(RunEventRow.chat_id == chat_id, RunEventRow.run_id != newest)
            )

    def discard(self, run_id: str) -> None:
        """Forget a claimed run that never started (its agent or model could not be set up)."""
        with self._write() as session:
            row = session.get(RunRow, run_id)
            if row is not None:
                session.delete(row)

    def renew(self, replica: str, run_ids: Sequence[str], *, lease: float) -> set[str]:
        """Extend the leases of `replica`'s runs; returns those still running (a run missing from the
        answer was reaped meanwhile: its owner stopped renewing for too long)."""
        if not run_ids:
            return set()
        until = utcnow() + timedelta(seconds=lease)
        with self._write() as session:
            renewed = session.scalars(
                update(RunRow)
                .where(RunRow.id.in_(run_ids), RunRow.replica == replica, RunRow.status == "running")
                .values(lease_until=until)
                .returning(RunRow.id)
            )
            return set(renewed)

    def end(
        self, run_id: str, status: RunStatus, events: Sequence[str] = (), *, replica: str | None = None
    ) -> list[RunEvent]:
        """Write the run's last `events` and end it with `status`, in one transaction: a stream that sees
        the last event can start the next run at once. A run reaped meanwhile keeps `interrupted` and
        gets no more events (none are written: see `append`); so does a run `replica` no longer owns
        (another took it over)."""
        with self._write() as session:
            chat_id = self._running_chat(session, run_id, replica, lock_for_update=True)
            if chat_id is None:
                return []
            written = self._insert_events(session, chat_id, run_id, events)
            session.execute(
                update(RunRow).where(RunRow.id == run_id).values(status=status, ended_at=utcnow())
            )
            return written

    @staticmethod
    def _running_chat(
        session: Session, run_id: str, replica: str | None = None, *, lock_for_update: bool = False
    ) -> int | None:
        """The chat of run `run_id` while it is `running` (owned by `replica`, when given), its row locked
        until the transaction ends (on PostgreSQL) so that no replica's `reap` ends it in between; None
        once it ended."""
        query = select(RunRow.chat_id).where(RunRow.id == run_id, RunRow.status == "running")
        if replica is not None:
            query = query.where(RunRow.replica == replica)
        return session.scalar(query.with_for_update(read=not lock_for_update))

    # -- events ------------------------------------------------------------------------------------------

    def append(
        self, run_id: str, chat_id: int, events: Sequence[str], *, replica: str | None = None
    ) -> list[RunEvent]:
        """Write `events` (JSON texts, in order) in one transaction; returns them with their ids. None are
        written (an empty list) once the run ended: a run reaped from an owner that lived on (a stalled
        replica) must not add events after its `run_interrupted`, where the chat's next run may be; nor,
        with `replica`, once another replica took the run over."""
        with self._write() as session:
            if self._running_chat(session, run_id, replica) is None:
                return []
            return self._insert_events(session, chat_id, run_id, events)

    def _insert_events(
        self, session: Session, chat_id: int, run_id: str, events: Sequence[str]
    ) -> list[RunEvent]:
        if not events:
            return []
        now = utcnow()
        ids = session.scalars(
            insert(RunEventRow).returning(RunEventRow.id, sort_by_parameter_order=True),
            [{"chat_id": chat_id, "run_id": run_id, "data": data, "created_at": now} for data in events],
        ).all()
        written = [
            RunEvent(id=i, chat_id=chat_id, run_id=run_id, data=d) for i, d in zip(ids, events, strict=True)
        ]
        self._notify(session, [EventsNotice(chat_id, written[-1].id)])
        return written

    def events_after(self, chat_id: int, after: int, *, limit: int = 1000) -> list[RunEvent]:
        """The chat's events with ids above `after`, oldest first, at most `limit`."""
        query = (
            select(RunEventRow.id, RunEventRow.run_id, RunEventRow.data)
            .where(RunEventRow.chat_id == chat_id, RunEventRow.id > after)
            .order_by(RunEventRow.id)
            .limit(limit)
        )
        with self._read() as session:
            return [RunEvent(id=i, chat_id=chat_id, run_id=r, data=d) for i, r, d in session.execute(query)]

    def replay_start(self, chat_id: int) -> int:
        """Where a new stream of the chat starts (the id it reads after): the current run's first event,
        or the chat's newest event when no run is in progress (only what comes next)."""
        with self._read() as session:
            running = select(RunRow.id).where(RunRow.chat_id == chat_id, RunRow.status == "running")
            first = session.scalar(select(func.min(RunEventRow.id)).where(RunEventRow.run_id.in_(running)))
            if first is not None:
                return int(first) - 1
            last = session.scalar(select(func.max(RunEventRow.id)).where(RunEventRow.chat_id == chat_id))
            return int(last or 0)

    # -- runs as others see them -------------------------------------------------------------------------

    def get(self, run_id: str) -> RunRecord | None:
        with self._read() as session:
            row = session.get(RunRow, run_id)
            return _record(row) if row is not None else None

    def current(self, chat_id: int) -> RunRecord | None:
        """The chat's run in progress, on whichever replica."""
        with self._read() as session:
            row = session.scalar(select(RunRow).where(RunRow.chat_id == chat_id, RunRow.status == "running"))
            return _record(row) if row is not None else None

    def of_chat(self, chat_id: int) -> list[RunRecord]:
        """The chat's runs, oldest first."""
        with self._read() as session:
            rows = session.scalars(
                select(RunRow).where(RunRow.chat_id == chat_id).order_by(RunRow.started_at, RunRow.id)
            )
            return [_record(row) for row in rows]

    def last_of(self, chat_ids: Sequence[int]) -> dict[int, RunRecord]:
        """Each chat's latest run (chats that never ran are left out)."""
        if not chat_ids:
            return {}
        latest = (
            select(RunRow.chat_id, func.max(RunRow.started_at).label("started_at"))
            .where(RunRow.chat_id.in_(chat_ids))
            .group_by(RunRow.chat_id)
            .subquery()
        )
        query = select(RunRow).join(
            latest, (RunRow.chat_id == latest.c.chat_id) & (RunRow.started_at == latest.c.started_at)
        )
        with self._read() as session:
            return {row.chat_id: _record(row) for row in session.scalars(query)}

    def awaiting_approval(self, run_id: str, call_id: str) -> bool:
        """Whether the run is in progress with call `call_id` asking for approval, unanswered: its
        request is an event, and neither its decision nor anyone's answer is a row yet."""
        request = self._unanswered(
            run_id,
            call_id,
            "%approval_%",
            asks=lambda e: e.get("type") == "approval_requested" and e.get("call", {}).get("id") == call_id,
            settles=lambda e: e.get("type") == "approval_decided" and e.get("call_id") == call_id,
        )
        return request is not None

    def waiting_server_request(self, run_id: str, request_id: str) -> dict[str, Any] | None:
        """The `server_request` event of a server's question `request_id` while the run is in progress
        and nobody answered it (no `server_request_answered` event, no `answer` signal); else None."""
        return self._unanswered(
            run_id,
            request_id,
            "%server_request%",
            asks=lambda e: e.get("type") == "server_request" and e.get("request_id") == request_id,
            settles=lambda e: (
                e.get("type") == "server_request_answered" and e.get("request_id") == request_id
            ),
        )

    def _unanswered(
        self,
        run_id: str,
        key: str,
        like: str,
        *,
        asks: Callable[[dict[str, Any]], bool],
        settles: Callable[[dict[str, Any]], bool],
    ) -> dict[str, Any] | None:
        """The last event that `asks` (an approval, a server's question) of a running run, unless an
        event after it `settles` it or a signal row for `key` answered it already."""
        with self._read() as session:
            status = session.scalar(select(RunRow.status).where(RunRow.id == run_id))
            if status != "running":
                return None
            answered = session.scalar(
                select(func.count()).where(RunSignalRow.run_id == run_id, RunSignalRow.call_id == key)
            )
            if answered:
                return None
            # Only events that may be the question or its end (parsed below), not every token of the run.
            rows = session.scalars(
                select(RunEventRow.data)
                .where(RunEventRow.run_id == run_id, RunEventRow.data.like(like))
                .order_by(RunEventRow.id)
            )
            waiting: dict[str, Any] | None = None
            for data in rows:
                event = json.loads(data)
                if asks(event):
                    waiting = event
                elif settles(event):
                    waiting = None
            return waiting

    # -- signals -----------------------------------------------------------------------------------------

    def signal(
        self, run_id: str, kind: SignalKind, call_id: str | None = None, *, payload: str | None = None
    ) -> bool:
        """Ask the run's owner to cancel it, to approve or deny call `call_id`, or to hand `payload` to
        the server's question `call_id` (a request id) as its answer. False when there is no such run
        (one that never started is forgotten: it may go between finding it and signalling it)."""
        try:
            with self._write() as session:
                session.add(RunSignalRow(run_id=run_id, kind=kind, call_id=call_id, payload=payload))
                session.flush()  # the run's row must exist: checked here, not at the commit
                self._notify(session, [SignalsNotice(run_id)])
        except IntegrityError:
            return False
        return True

    def forget_payload(self, signal_id: int) -> None:
        """Blank a signal's payload once its owner took it: an answer may hold a secret a form asked for."""
        with self._write() as session:
            session.execute(update(RunSignalRow).where(RunSignalRow.id == signal_id).values(payload=None))

    def signals_after(self, run_ids: Sequence[str], after: int) -> list[RunSignal]:
        """The signals for `run_ids` with ids above `after`, oldest first."""
        if not run_ids:
            return []
        query = (
            select(RunSignalRow)
            .where(RunSignalRow.run_id.in_(run_ids), RunSignalRow.id > after)
            .order_by(RunSignalRow.id)
        )
        with self._read() as session:
            return [
                RunSignal(
                    id=row.id,
                    run_id=row.run_id,
                    kind=_signal_kind(row.kind),
                    call_id=row.call_id,
                    payload=row.payload,
                )
                for row in session.scalars(query)
            ]

    # -- leases ------------------------------------------------------------------------------------------

    def take_over_tasks(self, replica: str, *, lease: float, now: datetime | None = None) -> list[TakenRun]:
        """Give `replica` every running run whose lease ran out while it waited for a task
        (`toolbridge.runs.takeover`), each with a `run_resumed` event; the tasks come with it. Call it
        before `reap(now)` with the same `now`: a run is taken over by exactly one replica (the UPDATE
        re-checks the lease under the row's lock), and the others reap only runs without a task."""
        now = now or utcnow()
        expired = (RunRow.status == "running", RunRow.lease_until < now)
        with self._read() as session:
            runs: dict[str, int] = {
                r: c for r, c in session.execute(select(RunRow.id, RunRow.chat_id).where(*expired))
            }
            if not runs:
                return []
            # Only the events that start a task or store a result, not every token of the runs.
            rows = session.execute(
                select(RunEventRow.run_id, RunEventRow.data)
                .where(
                    RunEventRow.run_id.in_(runs),
                    or_(RunEventRow.data.like(f"%{TASK_STARTED}%"), RunEventRow.data.like("%message_added%")),
                )
                .order_by(RunEventRow.id)
            )
            events: dict[str, list[dict[str, Any]]] = {}
            for run_id, data in rows:
                events.setdefault(run_id, []).append(json.loads(data))
        taken: list[TakenRun] = []
        for run_id, run_events in events.items():
            tasks = unfinished_tasks(run_events)
            if not tasks:
                continue
            with self._write() as session:
                won = session.scalar(
                    update(RunRow)
                    .where(RunRow.id.in_(_unlocked(RunRow.id == run_id, *expired)))
                    .values(replica=replica, lease_until=utcnow() + timedelta(seconds=lease))
                    .returning(RunRow.id)
                )
                if won is None:
                    continue  # another replica took it (or reaped it) first
                resumed = run_resumed_event(run_id, replica, tasks)
                self._insert_events(session, runs[run_id], run_id, [resumed])
            taken.append(TakenRun(run_id, runs[run_id], tuple(tasks)))
        return taken

    def reap(self, now: datetime | None = None, *, sparing: Collection[str] = ()) -> list[RunEvent]:
        """End `interrupted` every running run whose lease ran out (its replica stopped renewing: it
        died), each with a `run_interrupted` event, except the runs `sparing` names; returns those
        events. Safe from many replicas at once: a run is reaped by exactly one (the UPDATE re-checks
        its status under the row's lock)."""
        now = now or utcnow()
        expired = (RunRow.status == "running", RunRow.lease_until < now, RunRow.id.not_in(sparing))
        with self._read() as session:  # usually nothing: then no write (a read-only replica stays healthy)
            if session.scalar(select(RunRow.id).where(*expired).limit(1)) is None:
                return []
        with self._write() as session:
            reaped = session.execute(
                update(RunRow)
                .where(RunRow.id.in_(_unlocked(*expired)))
                .values(status="interrupted", ended_at=now)
                .returning(RunRow.id, RunRow.chat_id)
            ).all()
            written: list[RunEvent] = []
            for run_id, chat_id in reaped:
                event = {"type": "run_interrupted", "run_id": run_id, "message": INTERRUPTED_MESSAGE}
                written += self._insert_events(session, chat_id, run_id, [json.dumps(event)])
            return written


def _unlocked(*conditions: ColumnElement[bool]) -> Select[str]:
    """The runs matching `conditions` that no other transaction holds (PostgreSQL; SQLite has one
    writer): a replica stalled in the middle of writing a run's events keeps its row locked, and waiting
    for it would stall every other replica's keeper too (renewals included). Such a run is left for the
    next round."""
    return select(RunRow.id).where(*conditions).with_for_update(skip_locked=True)


def _record(row: RunRow) -> RunRecord:
    return RunRecord(
        id=row.id,
        chat_id=row.chat_id,
        replica=row.replica,
        status=_status(row.status),
        started_at=row.started_at,
        lease_until=row.lease_until,
        ended_at=row.ended_at,
    )


def _status(value: str) -> RunStatus:
    if value not in get_args(RunStatus):
        raise StoreError(f"run status {value!r} is unknown to this toolbridge; upgrade it")
    return cast(RunStatus, value)


def _signal_kind(value: str) -> SignalKind:
    if value not in get_args(SignalKind):
        raise StoreError(f"run signal {value!r} is unknown to this toolbridge; upgrade it")
    return cast(SignalKind, value)
