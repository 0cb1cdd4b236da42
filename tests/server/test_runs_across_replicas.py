"""Three whole servers (each on its own thread and event loop) on one PostgreSQL schema act as one: a run
started on A streams on B, is approved on C and cancelled from B; a stream resumes after its
`Last-Event-ID`; a second start on another replica is a 409; what is not there is a 404 everywhere.
"""

from __future__ import annotations

from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

import pytest
from replicas import LEASE, postgres_schema, three_servers, wait_for
from server_helpers import EventReader, Gate, serve_in_thread
from sqlalchemy import create_engine, insert

from toolbridge.runs.ledger import RunLedger, RunRecord
from toolbridge.store import Store
from toolbridge.store._schema import RunSignalRow, utcnow
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

WAIT = 20.0


def run_of(store: Store, run_id: str) -> RunRecord:
    run = RunLedger.of(store).get(run_id)
    assert run is not None
    return run


def test_a_run_started_on_one_replica_is_streamed_approved_and_cancelled_on_others(tmp_path: Path) -> None:
    gate = Gate(WAIT)
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "6 * 7"}, id="call_ok")),
        Turn.text("42."),
        Turn.text("Never sent.").expecting(gate),
    ]
    with ScriptedModelServer(turns) as model, postgres_schema("runs") as url, ExitStack() as stack:
        stack.callback(gate.released.set)  # before the model stops
        a, b, c = three_servers(tmp_path, model, url, stack)
        on_a, on_b, on_c = a.http(), b.http(), c.http()
        chat_id = on_a.post("/api/chats", json={}).json()["id"]

        with EventReader(on_b, chat_id) as stream_b:
            run_id = on_a.post(f"/api/chats/{chat_id}/messages", json={"content": "6 * 7?"}).json()["run_id"]
            before = stream_b.until("approval_requested")
            assert before[0] == {"type": "run_started", "run_id": run_id, "model": "scripted"}
            requested_id = stream_b.last_id
            assert requested_id is not None

            with Store(url) as store:
                started = run_of(store, run_id).started_at
                # The owner keeps renewing while the run waits (here, past a whole lease).
                wait_for(
                    lambda: run_of(store, run_id).lease_until > started + timedelta(seconds=1.5),
                    "the lease to be renewed",
                )
                assert run_of(store, run_id).status == "running"

            for replica in (on_b, on_c):
                busy = replica.post(f"/api/chats/{chat_id}/messages", json={"content": "again"})
                assert busy.status_code == 409, busy.text
                assert run_id in busy.json()["error"]["message"]
            for replica in (on_a, on_c):
                unknown = replica.post(
                    f"/api/chats/{chat_id}/approvals/call_unknown", json={"approved": True}
                )
                assert unknown.status_code == 404, unknown.text

            assert (
                on_c.post(f"/api/chats/{chat_id}/approvals/call_ok", json={"approved": True}).status_code
                == 204
            )
            after = stream_b.until("final")
            decided = next(e for e in after if e["type"] == "approval_decided")
            assert decided == {"type": "approval_decided", "step": 1, "call_id": "call_ok", "approved": True}
            assert after[-1]["result"]["output"] == "42."
            # Answered once: a second answer, on any replica, finds nothing waiting.
            again = on_b.post(f"/api/chats/{chat_id}/approvals/call_ok", json={"approved": False})
            assert again.status_code == 404

        # A stream that reconnects with the last id it saw gets exactly what followed it.
        with EventReader(on_c, chat_id, last_event_id=requested_id) as resumed:
            assert [resumed.next() for _ in after] == after

        # A page opened with no run in progress waits for the next one; the next is cancelled from B.
        with EventReader(on_c, chat_id) as stream_c:
            second = on_a.post(f"/api/chats/{chat_id}/messages", json={"content": "Again?"}).json()["run_id"]
            assert gate.arrived.wait(WAIT)
            assert stream_c.next() == {"type": "run_started", "run_id": second, "model": "scripted"}
            assert on_b.post(f"/api/chats/{chat_id}/cancel").status_code == 204
            cancelled = stream_c.until("final")
            assert cancelled[-1]["result"]["stop_reason"] == "cancelled"
        gate.released.set()

        for replica in (on_a, on_b, on_c):
            assert replica.post(f"/api/chats/{chat_id}/cancel").status_code == 404
            assert replica.post("/api/chats/999999/cancel").status_code == 404
            refused = replica.post(f"/api/chats/{chat_id}/approvals/call_ok", json={"approved": True})
            assert refused.status_code == 404

        with Store(url) as store:
            runs = RunLedger.of(store).of_chat(chat_id)
            assert [(run.id, run.status) for run in runs] == [(run_id, "completed"), (second, "cancelled")]
            assert {run.replica for run in runs} == {runs[0].replica}  # both owned by A
            roles = [m.role for m in store.get_messages(chat_id)]
        assert roles == ["user", "assistant", "tool", "assistant", "user"]


def test_a_stream_opened_mid_run_replays_it_from_its_start_on_any_replica(tmp_path: Path) -> None:
    turns = [Turn.tool_calls(ToolCallSpec("calculate", {"expression": "1 + 1"}, id="call_sum"))]
    with ScriptedModelServer(turns) as model, postgres_schema("runs") as url, ExitStack() as stack:
        a, b, c = three_servers(tmp_path, model, url, stack)
        chat_id = a.http().post("/api/chats", json={}).json()["id"]
        with EventReader(a.http(), chat_id) as on_owner:
            run_id = (
                a.http().post(f"/api/chats/{chat_id}/messages", json={"content": "1 + 1?"}).json()["run_id"]
            )
            seen = on_owner.until("approval_requested")
            for replica in (b, c):
                with EventReader(replica.http(), chat_id) as late:
                    assert [late.next() for _ in seen] == seen
            assert seen[0] == {"type": "run_started", "run_id": run_id, "model": "scripted"}
            bad = b.http().get(f"/api/chats/{chat_id}/events", headers={"Last-Event-ID": "yesterday"})
            assert bad.status_code == 400
            assert "Last-Event-ID" in bad.json()["error"]["message"]


def test_a_signal_whose_notice_was_lost_is_acted_on_at_the_next_lease_renewal(tmp_path: Path) -> None:
    gate = Gate(WAIT)
    with (
        ScriptedModelServer([Turn.text("Never sent.").expecting(gate)]) as model,
        postgres_schema("runs") as url,
        ExitStack() as stack,
    ):
        stack.callback(gate.released.set)  # before the model stops
        (tmp_path / "a").mkdir()
        owner = stack.enter_context(serve_in_thread(tmp_path / "a", model, db_url=url, server=LEASE))
        http = owner.http()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        with EventReader(http, chat_id) as events:
            run_id = http.post(f"/api/chats/{chat_id}/messages", json={"content": "Hi"}).json()["run_id"]
            assert gate.arrived.wait(WAIT)
            # A cancel written without its NOTIFY (as if sent while the owner's listener was away).
            engine = create_engine(url)
            with engine.begin() as connection:
                connection.execute(
                    insert(RunSignalRow).values(run_id=run_id, kind="cancel", created_at=utcnow())
                )
            engine.dispose()
            assert events.until("final")[-1]["result"]["stop_reason"] == "cancelled"
