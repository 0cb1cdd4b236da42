"""Which runs of a dead replica are taken over instead of ended `interrupted`: those waiting for a task
whose call's result was never stored (`toolbridge.runs.takeover`), taken by exactly one replica, the
others reaped as before."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy

from postgres_schemas import create_schema, drop_schema, schema_url
from toolbridge.agent import MessageAddedEvent
from toolbridge.mcp.tasks import TaskHandle
from toolbridge.runs.ledger import RunLedger
from toolbridge.runs.takeover import task_started_event, unfinished_tasks
from toolbridge.store import Store
from toolbridge.store._schema import utcnow
from toolbridge.types import ToolMessage, ToolResult

TASK = TaskHandle(server="tasks", call_id="call_1", tool="wait_for_release", task_id="t-1", poll_ms=50)


def result_stored(call_id: str) -> str:
    message = ToolMessage(name="wait_for_release", result=ToolResult(call_id=call_id))
    return MessageAddedEvent(step=1, index=3, message=message).model_dump_json()


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        with Store(f"sqlite:///{tmp_path / 'toolbridge.db'}") as opened:
            yield opened
        return
    schema = create_schema("takeover")
    try:
        with Store(schema_url(schema)) as opened:
            yield opened
    finally:
        drop_schema(schema)


def test_a_task_is_unfinished_until_its_calls_result_is_stored() -> None:
    other = TaskHandle(server="tasks", call_id="call_2", tool="slow_compute", task_id="t-2")
    started = [json.loads(task_started_event("r", TASK)), json.loads(task_started_event("r", other))]
    assert unfinished_tasks(started) == [TASK, other]
    finished = json.loads('{"type": "tool_call_finished", "call_id": "call_1"}')
    assert unfinished_tasks([*started, finished]) == [TASK, other]  # its result may not be stored yet
    assert unfinished_tasks([*started, json.loads(result_stored("call_1"))]) == [other]
    assert unfinished_tasks([json.loads(result_stored("call_9"))]) == []


def test_a_dead_replicas_run_waiting_for_a_task_is_taken_over_once_and_the_others_reaped(
    store: Store,
) -> None:
    ledger = RunLedger.of(store)
    waiting, answered, plain = store.create_chat().id, store.create_chat().id, store.create_chat().id
    ledger.claim("waiting", waiting, replica="dead", lease=1)
    ledger.append("waiting", waiting, ['{"type": "text_delta", "text": "task_started"}'])
    ledger.append("waiting", waiting, [task_started_event("waiting", TASK)])
    ledger.claim("answered", answered, replica="dead", lease=1)
    ledger.append("answered", answered, [task_started_event("answered", TASK), result_stored("call_1")])
    ledger.claim("plain", plain, replica="dead", lease=1)
    later = utcnow() + timedelta(seconds=5)

    (taken,) = ledger.take_over_tasks("b", lease=30, now=later)
    assert (taken.run_id, taken.chat_id, taken.tasks) == ("waiting", waiting, (TASK,))
    assert ledger.take_over_tasks("c", lease=30, now=later) == []  # exactly one replica takes it
    reaped = ledger.reap(later)
    assert sorted(event.run_id for event in reaped) == ["answered", "plain"]

    run = ledger.get("waiting")
    assert run is not None
    assert (run.status, run.replica) == ("running", "b")
    assert ledger.renew("b", ["waiting"], lease=30) == {"waiting"}  # b owns it now
    last = json.loads(ledger.events_after(waiting, 0)[-1].data)
    assert (last["type"], last["replica"], last["task_ids"]) == ("run_resumed", "b", ["t-1"])


def test_a_run_locked_by_a_replica_stalled_mid_write_is_skipped_not_waited_for() -> None:
    """A replica stopped (a pause, a frozen VM) inside a transaction that writes its run's events keeps
    the run's row locked: the others' keepers pass it by and take it over or reap it once it is free,
    instead of waiting, which stalled their own renewals too."""
    schema = create_schema("takeover_locked")
    try:
        with Store(schema_url(schema)) as store:
            ledger = RunLedger.of(store)
            waiting, plain = store.create_chat().id, store.create_chat().id
            ledger.claim("waiting", waiting, replica="stalled", lease=1)
            ledger.append("waiting", waiting, [task_started_event("waiting", TASK)])
            ledger.claim("plain", plain, replica="stalled", lease=1)
            later = utcnow() + timedelta(seconds=5)
            engine = sqlalchemy.create_engine(schema_url(schema))
            try:
                with engine.begin() as stalled:  # as `append` holds it while it writes
                    stalled.execute(sqlalchemy.text("SELECT id FROM runs FOR SHARE"))
                    assert ledger.take_over_tasks("b", lease=30, now=later) == []
                    assert ledger.reap(later) == []
            finally:
                engine.dispose()
            (taken,) = ledger.take_over_tasks("b", lease=30, now=later)
            assert taken.run_id == "waiting"
            assert [event.run_id for event in ledger.reap(later)] == ["plain"]
    finally:
        drop_schema(schema)
