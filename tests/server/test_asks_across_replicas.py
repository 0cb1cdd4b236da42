"""A server's question during a run (an elicitation form, a sampling approval) is answered on whichever
replica the page's answer reaches: three whole servers on one PostgreSQL schema, the run on A, the
question read on B and answered on C. A form's answer is checked where it arrives (422 there), the owner
blanks the answer's row once taken, and the answer's content is never logged; a question that is not
waiting is a 404 on every replica."""

from __future__ import annotations

import json
import logging
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from replicas import postgres_schema, three_servers, wait_for
from server_helpers import EventReader, RunningServer, tool_result_says
from sqlalchemy import create_engine, select

from toolbridge.runs.ledger import RunLedger
from toolbridge.store import Store
from toolbridge.store._schema import RunSignalRow
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

ASKER = {
    "asker": {
        "command": sys.executable,
        "args": [str(Path(__file__).parents[1] / "servers" / "asks_client.py")],
    }
}
SECRET_CITY = "Oslo-7f3a9c"
"""What the form is answered with: it must reach the server, and no log."""


def answer(server: RunningServer, chat_id: int, request_id: str, body: dict[str, Any]) -> int:
    url = f"/api/chats/{chat_id}/server-requests/{request_id}"
    return server.http().post(url, json=body).status_code


def test_a_form_asked_on_one_replica_is_answered_on_another(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    sent = {
        "action": "accept",
        "content": {"city": SECRET_CITY, "guests": 2, "meal": "dinner", "vegetarian": False},
    }
    turns = [
        Turn.tool_calls(ToolCallSpec("ask_preferences", {}, id="call_form")),
        Turn.text("Booked.", expect=tool_result_says(json.dumps(sent, sort_keys=True))),
    ]
    with ScriptedModelServer(turns) as model, postgres_schema("asks") as url, ExitStack() as stack:
        a, b, c = three_servers(tmp_path, model, url, stack, mcp_servers=ASKER)
        chat_id = a.http().post("/api/chats", json={}).json()["id"]
        with EventReader(b.http(), chat_id) as on_b:
            run_id = (
                a.http().post(f"/api/chats/{chat_id}/messages", json={"content": "Book"}).json()["run_id"]
            )
            question = on_b.until("server_request")[-1]
            assert (question["kind"], question["call_id"]) == ("form", "call_form")
            request_id = question["request_id"]

            for replica in (a, b, c):  # the run is going, but no such question waits in it
                assert answer(replica, chat_id, "not-a-request", {"action": "cancel"}) == 404
                assert answer(replica, 999999, request_id, {"action": "cancel"}) == 404
            # Checked on the replica it reaches, which did not ask: the form stays open.
            refused = c.http().post(
                f"/api/chats/{chat_id}/server-requests/{request_id}",
                json={"action": "accept", "content": {"guests": 3}},
            )
            assert refused.status_code == 422, refused.text
            assert refused.json()["error"]["message"] == "City is required"
            assert (
                answer(c, chat_id, request_id, {"action": "accept", "content": {"city": SECRET_CITY}}) == 204
            )

            after = on_b.until("final")
            answered = next(e for e in after if e["type"] == "server_request_answered")
            assert answered == {
                "type": "server_request_answered",
                "request_id": request_id,
                "call_id": "call_form",
                "action": "accept",
            }
            assert after[-1]["result"]["output"] == "Booked."
        for replica in (a, b, c):  # answered once, and the run is over
            assert answer(replica, chat_id, request_id, {"action": "decline"}) == 404

        engine = create_engine(url)
        with engine.connect() as connection:
            rows = connection.execute(
                select(RunSignalRow.kind, RunSignalRow.call_id, RunSignalRow.payload).where(
                    RunSignalRow.run_id == run_id
                )
            ).all()
        engine.dispose()
        assert [tuple(row) for row in rows] == [("answer", request_id, None)]  # taken, then blanked
    assert SECRET_CITY not in caplog.text


def test_sampling_approved_on_another_replica_and_a_malformed_answer_left_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sampled = lambda r: r.messages[0]["content"] == "Summarize in one line."  # noqa: E731
    turns = [
        Turn.tool_calls(ToolCallSpec("summarize", {"text": "a long text"}, id="call_one")),
        Turn.text("short.", expect=sampled),
        Turn.tool_calls(ToolCallSpec("summarize", {"text": "more"}, id="call_two")).expecting(
            tool_result_says("short.")
        ),
        Turn.text("Declined, then.", expect=tool_result_says("declined the sampling request")),
    ]
    with ScriptedModelServer(turns) as model, postgres_schema("asks") as url, ExitStack() as stack:
        a, b, _ = three_servers(tmp_path, model, url, stack, mcp_servers=ASKER)
        chat_id = a.http().post("/api/chats", json={}).json()["id"]
        with EventReader(a.http(), chat_id) as on_a:
            run_id = a.http().post(f"/api/chats/{chat_id}/messages", json={"content": "Sum"}).json()["run_id"]
            first = on_a.until("server_request")[-1]
            assert (first["kind"], first["call_id"]) == ("sampling", "call_one")
            assert answer(b, chat_id, first["request_id"], {"action": "accept"}) == 204

            second = on_a.until("server_request")[-1]
            assert second["call_id"] == "call_two"
            # An answer the owner cannot use (as from a replica of another version): it stays waiting.
            with Store(url) as store:
                shrug = json.dumps({"action": "shrug"})
                RunLedger.of(store).signal(run_id, "answer", second["request_id"], payload=shrug)
            wait_for(lambda: "ignoring a malformed answer" in caplog.text, "the owner to set it aside")
            assert answer(a, chat_id, second["request_id"], {"action": "decline"}) == 204
            after = on_a.until("final")
        actions = [e["action"] for e in after if e["type"] == "server_request_answered"]
        assert actions == ["decline"]
        assert after[-1]["result"]["output"] == "Declined, then."
