"""Runs as rows (`RunLedger`) on SQLite and PostgreSQL: one running run per chat whoever claims it,
events in order after an id, signals, approvals decided from the rows, leases renewed and reaped once;
and on PostgreSQL, notices heard by every listener of the same schema only, also after the listening
connection is cut."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.orm import Session

from postgres_schemas import POSTGRES_URL, blocked_by, create_schema, drop_schema, schema_url
from toolbridge.agent import MessageAddedEvent
from toolbridge.runs.ledger import (
    EventsNotice,
    Notice,
    RunConflictError,
    RunLedger,
    SignalsNotice,
    parse_notice,
    payload,
)
from toolbridge.runs.notifier import RunNotifier
from toolbridge.runs.recorder import RunRecorder
from toolbridge.store import RunNotOwnedError, Store, StoreError
from toolbridge.store._schema import utcnow
from toolbridge.types import AssistantMessage, UserMessage

WAIT = 10.0


@pytest.fixture
def schemas() -> Iterator[list[str]]:
    """Make fresh PostgreSQL schemas with `new_schema`; all dropped afterwards."""
    made: list[str] = []
    yield made
    drop_schema(*made)


def new_schema(schemas: list[str]) -> str:
    schemas.append(create_schema("runs"))
    return schema_url(schemas[-1])


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path, schemas: list[str]) -> Iterator[Store]:
    url = f"sqlite:///{tmp_path / 'toolbridge.db'}" if request.param == "sqlite" else new_schema(schemas)
    with Store(url) as opened:
        yield opened


def approval(kind: str, call_id: str) -> str:
    if kind == "requested":
        return json.dumps({"step": 1, "type": "approval_requested", "call": {"id": call_id}, "reason": "r"})
    return json.dumps({"step": 1, "type": "approval_decided", "call_id": call_id, "approved": True})


def test_one_running_run_per_chat_and_its_events_in_order(store: Store) -> None:
    chat = store.create_chat().id
    other = store.create_chat().id
    RunLedger.of(store).claim("r1", chat, replica="a", lease=30)
    with pytest.raises(RunConflictError, match=r"chat \d+ is still answering \(run r1\)"):
        RunLedger.of(store).claim("r2", chat, replica="b", lease=30)  # another replica, the same chat
    RunLedger.of(store).claim("r3", other, replica="b", lease=30)  # another chat is free

    first = RunLedger.of(store).append("r1", chat, ['{"n": 1}', '{"n": 2}'])
    RunLedger.of(store).append("r3", other, ['{"other": true}'])
    assert RunLedger.of(store).replay_start(chat) == first[0].id - 1  # a new stream: the run from its start
    ended = RunLedger.of(store).end("r1", "completed", ['{"n": 3}'])
    assert [e.data for e in RunLedger.of(store).events_after(chat, 0)] == ['{"n": 1}', '{"n": 2}', '{"n": 3}']
    assert [e.data for e in RunLedger.of(store).events_after(chat, first[0].id)] == ['{"n": 2}', '{"n": 3}']
    assert RunLedger.of(store).replay_start(chat) == ended[-1].id  # no run: only what comes next
    assert RunLedger.of(store).current(chat) is None

    RunLedger.of(store).claim("r4", chat, replica="b", lease=30)  # free again once ended
    RunLedger.of(store).discard("r4")  # a run that never started leaves nothing
    assert [run.id for run in RunLedger.of(store).of_chat(chat)] == ["r1"]

    # Each new run keeps the events of the one before it only (a stream may still resume there).
    RunLedger.of(store).end("r3", "completed")
    for run_id in ("r5", "r6"):
        RunLedger.of(store).claim(run_id, other, replica="b", lease=30)
        RunLedger.of(store).end(run_id, "completed", [f'"{run_id}"'])
    RunLedger.of(store).claim("r7", other, replica="b", lease=30)
    assert [e.run_id for e in RunLedger.of(store).events_after(other, 0)] == ["r6"]
    assert RunLedger.of(store).append("r7", other, ["{}"])[0].id > ended[-1].id  # ids never go back
    assert RunLedger.of(store).last_of([chat, other])[chat].status == "completed"


def test_an_approval_waits_until_decided_or_answered_once(store: Store) -> None:
    chat = store.create_chat().id
    RunLedger.of(store).claim("r1", chat, replica="a", lease=30)
    assert not RunLedger.of(store).awaiting_approval("r1", "call_1")
    RunLedger.of(store).append("r1", chat, [approval("requested", "call_1"), approval("requested", "call_2")])
    assert RunLedger.of(store).awaiting_approval("r1", "call_1")
    RunLedger.of(store).append("r1", chat, [approval("decided", "call_1")])
    assert not RunLedger.of(store).awaiting_approval("r1", "call_1")

    assert not RunLedger.of(store).signal("never-started", "cancel")  # discarded meanwhile: nothing to signal
    assert RunLedger.of(store).signal("r1", "deny", "call_2")
    assert not RunLedger.of(store).awaiting_approval("r1", "call_2")  # answered on some replica already
    RunLedger.of(store).signal("r1", "cancel")
    signals = RunLedger.of(store).signals_after(["r1"], 0)
    assert [(s.kind, s.call_id) for s in signals] == [("deny", "call_2"), ("cancel", None)]
    assert RunLedger.of(store).signals_after(["r1"], signals[0].id) == signals[1:]


def test_a_servers_question_waits_until_answered_and_an_answers_payload_can_be_forgotten(
    store: Store,
) -> None:
    chat = store.create_chat().id
    RunLedger.of(store).claim("r1", chat, replica="a", lease=30)
    asked = {"type": "server_request", "request_id": "q1", "call_id": "call_1", "kind": "form"}
    RunLedger.of(store).append("r1", chat, [json.dumps(asked), json.dumps({**asked, "request_id": "q2"})])
    assert RunLedger.of(store).waiting_server_request("r1", "q1") == asked
    assert RunLedger.of(store).waiting_server_request("r1", "q3") is None
    answered = {"type": "server_request_answered", "request_id": "q1", "call_id": "call_1"}
    RunLedger.of(store).append("r1", chat, [json.dumps(answered)])
    assert RunLedger.of(store).waiting_server_request("r1", "q1") is None

    secret = json.dumps({"action": "accept", "content": {"password": "hunter2"}})
    RunLedger.of(store).signal("r1", "answer", "q2", payload=secret)
    assert RunLedger.of(store).waiting_server_request("r1", "q2") is None  # answered on some replica already
    (signal,) = RunLedger.of(store).signals_after(["r1"], 0)
    assert (signal.kind, signal.call_id, signal.payload) == ("answer", "q2", secret)
    assert "hunter2" not in repr(signal)
    RunLedger.of(store).forget_payload(signal.id)
    assert RunLedger.of(store).signals_after(["r1"], 0)[0].payload is None
    RunLedger.of(store).append("r1", chat, [json.dumps({**asked, "request_id": "q3"})])
    assert RunLedger.of(store).waiting_server_request("r1", "q3") is not None
    RunLedger.of(store).end("r1", "completed")
    assert RunLedger.of(store).waiting_server_request("r1", "q3") is None  # the run is over


def test_expired_leases_are_reaped_once_with_an_event_and_renewed_ones_kept(store: Store) -> None:
    dead, alive = store.create_chat().id, store.create_chat().id
    RunLedger.of(store).claim("dead", dead, replica="gone", lease=1)
    RunLedger.of(store).claim("alive", alive, replica="here", lease=1)
    later = utcnow() + timedelta(seconds=5)
    assert RunLedger.of(store).renew("here", ["alive"], lease=10) == {"alive"}
    assert RunLedger.of(store).renew("here", ["dead"], lease=10) == set()  # not this replica's

    reaped = RunLedger.of(store).reap(later)
    assert [(e.run_id, e.chat_id) for e in reaped] == [("dead", dead)]
    assert json.loads(reaped[0].data)["type"] == "run_interrupted"
    assert RunLedger.of(store).reap(later) == []  # once
    assert RunLedger.of(store).get("dead").status == "interrupted"  # type: ignore[union-attr]
    assert RunLedger.of(store).get("alive").status == "running"  # type: ignore[union-attr]
    assert RunLedger.of(store).renew("gone", ["dead"], lease=10) == set()  # its owner learns it lost it
    RunLedger.of(store).end("dead", "completed")
    assert RunLedger.of(store).get("dead").status == "interrupted"  # type: ignore[union-attr]


def test_runs_spared_are_not_reaped_though_their_leases_ran_out(store: Store) -> None:
    # A SQLite server starting again takes over its runs that wait for a task, and reaps the rest.
    waiting, idle = store.create_chat().id, store.create_chat().id
    RunLedger.of(store).claim("waiting", waiting, replica="before", lease=1)
    RunLedger.of(store).claim("idle", idle, replica="before", lease=1)
    reaped = RunLedger.of(store).reap(utcnow() + timedelta(seconds=5), sparing={"waiting"})
    assert [event.run_id for event in reaped] == ["idle"]
    assert RunLedger.of(store).get("waiting").status == "running"  # type: ignore[union-attr]


def test_a_run_reaped_from_an_owner_that_lives_on_takes_no_more_events(store: Store) -> None:
    """A stalled replica's run is reaped and the chat answers again elsewhere: the stalled owner's late
    events must not land after `run_interrupted`, among the next run's."""
    chat = store.create_chat().id
    RunLedger.of(store).claim("stalled", chat, replica="a", lease=1)
    RunLedger.of(store).append("stalled", chat, ['"before"'])
    RunLedger.of(store).reap(utcnow() + timedelta(seconds=5))
    RunLedger.of(store).claim("next", chat, replica="b", lease=30)
    RunLedger.of(store).append("next", chat, ['"next"'])

    assert RunLedger.of(store).append("stalled", chat, ['"late"']) == []
    assert RunLedger.of(store).end("stalled", "completed", ['"final"']) == []
    events = [(e.run_id, json.loads(e.data)) for e in RunLedger.of(store).events_after(chat, 0)]
    assert [data if isinstance(data, str) else data["type"] for _, data in events] == [
        "before",
        "run_interrupted",
        "next",
    ]
    assert RunLedger.of(store).get("stalled").status == "interrupted"  # type: ignore[union-attr]


def _ledger_on(engine: Engine) -> RunLedger:
    """A ledger on an engine of the test's own, to watch its statements."""

    @contextmanager
    def session() -> Iterator[Session]:
        with Session(engine, expire_on_commit=False) as opened, opened.begin():
            yield opened

    return RunLedger(session, session, postgresql=True)


def test_a_run_ending_while_another_replica_reaps_it_is_ended_or_reaped_not_both(
    schemas: list[str],
) -> None:
    """`end` reads the run, then writes its status: a reap committed in between must not be overwritten
    (the run would be `completed` with a `run_interrupted` event, which the page took as its end)."""
    url = new_schema(schemas)
    with Store(url) as store:
        chat = store.create_chat().id
        RunLedger.of(store).claim("r1", chat, replica="a", lease=1)
    engine = create_engine(url)
    watcher = create_engine(POSTGRES_URL)
    ledger = _ledger_on(engine)
    read_the_run = threading.Event()
    reaped: list[Any] = []

    def after_execute(connection: Any, cursor: Any, statement: str, *_: Any) -> None:
        if read_the_run.is_set() or not statement.startswith("SELECT") or "FROM runs" not in statement:
            return
        read_the_run.set()  # `end` has read the run: let the reaper try now, before `end` writes
        pid = cursor.connection.info.backend_pid
        deadline = time.monotonic() + WAIT
        while not (reaped or blocked_by(watcher, pid)):
            assert time.monotonic() < deadline, "the reaper neither reaped nor waited for the run"
            time.sleep(0.01)  # polling the database for the reaper's state

    def reap() -> None:
        assert read_the_run.wait(WAIT)
        reaped.append(ledger.reap(utcnow() + timedelta(seconds=5)))

    event.listen(engine, "after_cursor_execute", after_execute)
    reaper = threading.Thread(target=reap)
    reaper.start()
    try:
        ended = ledger.end("r1", "completed", ['"final"'])
    finally:
        reaper.join(WAIT)
        engine.dispose()
        watcher.dispose()

    assert reaped == [[]]  # the reaper waited for `end`, then found the run over
    assert ledger.get("r1").status == "completed"  # type: ignore[union-attr]
    assert [e.data for e in ended] == ['"final"']


def test_a_failed_write_does_not_put_what_it_wrote_in_its_error(schemas: list[str]) -> None:
    """Store errors are logged and answered as they are: a form's answer (maybe a password) or a chat's
    text must not ride along in the statement's parameters."""
    schemas.append(create_schema("runs"))
    url = schema_url(schemas[-1], "lock_timeout=100")
    with Store(url) as store:
        chat = store.create_chat().id
        RunLedger.of(store).claim("r1", chat, replica="a", lease=30)
        engine = create_engine(url)
        try:
            with engine.connect() as holding, holding.begin():
                holding.execute(text("SELECT id FROM runs WHERE id = 'r1' FOR UPDATE"))
                secret = json.dumps({"action": "accept", "content": {"password": "hunter2"}})
                with pytest.raises(StoreError) as failed:  # the lock is not granted in time
                    RunLedger.of(store).signal("r1", "answer", "q1", payload=secret)
        finally:
            engine.dispose()
    assert "lock" in str(failed.value)
    assert "hunter2" not in str(failed.value)


def test_notices_round_trip_as_payloads() -> None:
    for notice in (EventsNotice(3, 41), SignalsNotice("abc")):
        assert parse_notice(payload(notice)) == notice
    assert parse_notice("something newer 1 2") is None


class Heard:
    def __init__(self) -> None:
        self.notices: list[Notice | None] = []
        self.changed = anyio.Event()

    def __call__(self, notice: Notice | None) -> None:
        self.notices.append(notice)
        self.changed.set()
        self.changed = anyio.Event()

    async def until(self, wanted: Any) -> None:
        with anyio.fail_after(WAIT):
            while wanted not in self.notices:
                await self.changed.wait()


@pytest.mark.anyio
async def test_listeners_hear_their_own_schema_only_and_again_after_the_connection_drops(
    schemas: list[str],
) -> None:
    with Store(new_schema(schemas)) as mine, Store(new_schema(schemas)) as theirs:
        assert RunLedger.of(mine).channel() != RunLedger.of(theirs).channel()
        heard_mine, heard_theirs = Heard(), Heard()
        async with anyio.create_task_group() as listening:
            notifiers = []
            for store, heard in ((mine, heard_mine), (theirs, heard_theirs)):
                notifier = RunNotifier(store.url, RunLedger.of(store).channel)
                notifier.add(heard)
                listening.start_soon(notifier.run)
                notifiers.append(notifier)
            for notifier in notifiers:
                with anyio.fail_after(WAIT):
                    await notifier.listening.wait()

            chat = mine.create_chat().id
            RunLedger.of(mine).claim("r1", chat, replica="a", lease=30)
            written = await anyio.to_thread.run_sync(lambda: RunLedger.of(mine).append("r1", chat, ["{}"]))
            await heard_mine.until(EventsNotice(chat, written[-1].id))
            await anyio.to_thread.run_sync(lambda: RunLedger.of(mine).signal("r1", "cancel"))
            await heard_mine.until(SignalsNotice("r1"))

            # The listening connection is cut (a restart, a proxy): it reconnects and says "look again".
            heard_mine.notices.clear()
            channel = RunLedger.of(mine).channel()
            engine = create_engine(POSTGRES_URL)
            with engine.begin() as connection:
                cut = connection.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE query = :listen AND pid <> pg_backend_pid()"
                    ),
                    {"listen": f'LISTEN "{channel}"'},
                ).all()
            engine.dispose()
            assert cut == [(True,)]
            await heard_mine.until(None)
            written = await anyio.to_thread.run_sync(lambda: RunLedger.of(mine).append("r1", chat, ["{}"]))
            await heard_mine.until(EventsNotice(chat, written[-1].id))
            listening.cancel_scope.cancel()
        assert heard_theirs.notices == [None]  # only its own "listening now": nothing of the other schema


def test_a_runs_messages_are_stored_only_while_its_replica_runs_it(store: Store) -> None:
    chat = store.create_chat().id
    ledger = RunLedger.of(store)
    ledger.claim("r1", chat, replica="a", lease=30)
    store.append_message(chat, UserMessage(content="Hi"))
    store.append_message(chat, AssistantMessage(content="Working on it."), run_of=("r1", "a"))
    with store.writing() as session:  # replica b took the run over (a stalled past its lease)
        session.execute(text("UPDATE runs SET replica = 'b' WHERE id = 'r1'"))
    with pytest.raises(RunNotOwnedError, match="run r1 is no longer this replica's"):
        store.append_message(chat, AssistantMessage(content="Stale."), run_of=("r1", "a"))
    store.append_message(chat, AssistantMessage(content="Done."), run_of=("r1", "b"))
    ledger.end("r1", "completed", [])
    with pytest.raises(RunNotOwnedError):  # an ended run takes no more messages
        store.append_message(chat, AssistantMessage(content="Late."), run_of=("r1", "b"))
    with pytest.raises(RunNotOwnedError):
        store.append_message(chat, AssistantMessage(content="Nobody's."), run_of=("r9", "a"))
    assert [message.content for message in store.get_messages(chat)] == ["Hi", "Working on it.", "Done."]


def test_a_recorder_whose_run_was_taken_over_stops_recording_and_says_why(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    chat = store.create_chat().id
    RunLedger.of(store).claim("r1", chat, replica="a", lease=30)
    recorder = RunRecorder(store, chat_id=chat, written=0, run_of=("r1", "a"))

    def added(index: int, text: str) -> MessageAddedEvent:
        return MessageAddedEvent(step=1, index=index, message=AssistantMessage(content=text))

    anyio.run(recorder.observe, added(0, "Mine."))
    with store.writing() as session:
        session.execute(text("UPDATE runs SET replica = 'b' WHERE id = 'r1'"))
    anyio.run(recorder.observe, added(1, "Stale."))
    anyio.run(recorder.observe, added(2, "Staler."))
    assert [message.content for message in store.get_messages(chat)] == ["Mine."]
    assert caplog.text.count("run r1 is no longer this replica's") == 1
    assert store.health().state == "ok"  # a run lost is not a store that fails
