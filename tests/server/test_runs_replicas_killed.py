"""Issue 14's "done when", on three real `toolbridge serve` processes on one PostgreSQL with a scripted
model: a chat started on A streams on B, is approved on C and cancelled from B; then the replica that owns
a run is killed with SIGKILL mid-run, another marks the run interrupted once its lease runs out, what it
completed is kept, and `toolbridge history` shows it all (run in-process: a CLI start costs seconds on a busy machine).
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from replicas import start_replicas
from server_helpers import EventReader, Gate
from users_helpers import cli, cli_json

from toolbridge.runs.ledger import RunLedger
from toolbridge.store import Store
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

CAREFUL = {"default": {"approval": {"tools": {"calculate": "always"}}}}
WAIT = 30.0


def test_three_replicas_share_runs_and_a_killed_owners_run_ends_interrupted(tmp_path: Path) -> None:
    cancelled_gate, killed_gate = Gate(WAIT), Gate(WAIT)
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "6 * 7"}, id="call_ok")),
        Turn.text("42."),
        Turn.text("Never sent.").expecting(cancelled_gate),
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "2 + 2"}, id="call_done")),
        Turn.text("Never sent either.").expecting(killed_gate),
    ]
    server = {"run_lease": 1.5}
    with (
        ScriptedModelServer(turns) as model,
        ExitStack() as before_the_model_stops,
        start_replicas(tmp_path, model, agents=CAREFUL, server=server) as fleet,
    ):
        before_the_model_stops.callback(cancelled_gate.released.set)
        before_the_model_stops.callback(killed_gate.released.set)
        a, b, c = fleet
        on_a, on_b, on_c = a.http(), b.http(), c.http()

        # Start on A, stream from B, approve on C.
        chat = on_a.post("/api/chats", json={}).json()["id"]
        with EventReader(on_b, chat) as stream_b:
            run = on_a.post(f"/api/chats/{chat}/messages", json={"content": "6 * 7?"}).json()["run_id"]
            assert stream_b.until("approval_requested")[0] == {
                "type": "run_started",
                "run_id": run,
                "model": "scripted",
            }
            assert (
                on_c.post(f"/api/chats/{chat}/approvals/call_ok", json={"approved": True}).status_code == 204
            )
            assert stream_b.until("final")[-1]["result"]["output"] == "42."

            # Cancel from B a run A owns.
            cancelled = on_a.post(f"/api/chats/{chat}/messages", json={"content": "More?"}).json()["run_id"]
            assert cancelled_gate.arrived.wait(WAIT)
            assert on_b.post(f"/api/chats/{chat}/cancel").status_code == 204
            assert stream_b.until("final")[-1]["result"]["stop_reason"] == "cancelled"
        cancelled_gate.released.set()

        # A run owned by B, followed on C: B dies after one completed step.
        doomed_chat = on_b.post("/api/chats", json={"title": "doomed"}).json()["id"]
        with EventReader(on_c, doomed_chat) as stream_c:
            doomed = on_b.post(f"/api/chats/{doomed_chat}/messages", json={"content": "2 + 2?"}).json()[
                "run_id"
            ]
            stream_c.until("approval_requested")
            assert (
                on_a.post(
                    f"/api/chats/{doomed_chat}/approvals/call_done", json={"approved": True}
                ).status_code
                == 204
            )
            # The tool's result is stored before its event reaches any stream.
            while (event := stream_c.next())["type"] != "message_added" or event["message"]["role"] != "tool":
                pass
            assert killed_gate.arrived.wait(WAIT)  # B is waiting for the model's next reply
            b.kill()
            interrupted = stream_c.until("run_interrupted")[-1]
        assert interrupted["run_id"] == doomed
        assert "the server running it stopped" in interrupted["message"]

        # The chat is free again, on any replica.
        busy_free = on_c.post(f"/api/chats/{doomed_chat}/cancel")
        assert busy_free.status_code == 404

        with Store(fleet.db_url) as store:
            statuses = {run.id: run.status for run in RunLedger.of(store).of_chat(chat)}
            assert statuses == {run: "completed", cancelled: "cancelled"}
            (killed_run,) = RunLedger.of(store).of_chat(doomed_chat)
            assert (killed_run.id, killed_run.status) == (doomed, "interrupted")
            kept = store.get_messages(doomed_chat)
        assert [m.role for m in kept] == ["user", "assistant", "tool"]
        assert kept[2].result.text == "4"  # type: ignore[union-attr]

        lines = cli(fleet.db_url, "history", "show", str(doomed_chat)).splitlines()
        note = next(i for i, line in enumerate(lines) if "run interrupted" in line)
        assert "the server running it stopped; its completed steps are kept" in lines[note]
        assert note > next(i for i, line in enumerate(lines) if line.startswith("tool"))  # where it stopped
        assert "run cancelled" in cli(fleet.db_url, "history", "show", str(chat))
        as_json = cli_json(fleet.db_url, "history", "show", str(doomed_chat))
        assert [(r["id"], r["status"]) for r in as_json["runs"]] == [(doomed, "interrupted")]
