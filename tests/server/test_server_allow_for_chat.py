""" "Allow for this chat" on an approval: the call runs, and the chat's later calls of the same tool run
without asking, in this run and the next, on whichever replica answers; other chats still ask."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from replicas import CAREFUL, LEASE, postgres_schema
from server_helpers import EventReader, serve_in_thread

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn


def calculate(expression: str, call_id: str) -> Turn:
    return Turn.tool_calls(ToolCallSpec("calculate", {"expression": expression}, id=call_id))


QUICK = {"approval_timeout": 10}
"""A call still asking after this is declined: without the allowance the test fails at once."""


def asked(events: list[dict[str, Any]]) -> list[str]:
    return [event["call"]["id"] for event in events if event["type"] == "approval_requested"]


def test_a_tool_allowed_for_a_chat_runs_without_asking_again_there(tmp_path: Path) -> None:
    turns = [
        calculate("6 * 7", "call_1"),
        calculate("6 * 8", "call_2"),  # the same run: not asked
        Turn.text("42 and 48."),
        calculate("6 * 9", "call_3"),  # the next run: not asked
        Turn.text("54."),
        calculate("1 + 1", "call_4"),  # another chat: asked
        Turn.text("2."),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, agents=CAREFUL, server=QUICK) as server,
    ):
        http = server.http()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        with EventReader(http, chat_id) as events:
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "6 * 7, 6 * 8?"})
            assert asked(events.until("approval_requested")) == ["call_1"]
            refused = http.post(
                f"/api/chats/{chat_id}/approvals/call_1", json={"approved": False, "for_chat": True}
            )
            assert refused.status_code == 400
            assert "approved: true" in refused.json()["error"]["message"]
            allowed = http.post(
                f"/api/chats/{chat_id}/approvals/call_1", json={"approved": True, "for_chat": True}
            )
            assert allowed.status_code == 204
            first = events.until("final")
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "6 * 9?"})
            second = events.until("final")
        # Allowed during a run, its next call there is approved at once (its events say so); the chat's
        # later runs do not ask at all.
        assert (asked(first), asked(second)) == (["call_2"], [])  # (call_1 was read above)
        for run, results in ((first, ["42", "48"]), (second, ["54"])):
            finished = [
                (e["is_error"], e["result_preview"]) for e in run if e["type"] == "tool_call_finished"
            ]
            assert finished == [(False, result) for result in results]
        assert first[-1]["result"]["output"] == "42 and 48."
        assert second[-1]["result"]["output"] == "54."

        other = http.post("/api/chats", json={}).json()["id"]
        with EventReader(http, other) as events:
            http.post(f"/api/chats/{other}/messages", json={"content": "1 + 1?"})
            assert asked(events.until("approval_requested")) == ["call_4"]
            assert (
                http.post(f"/api/chats/{other}/approvals/call_4", json={"approved": True}).status_code == 204
            )
            assert events.until("final")[-1]["result"]["output"] == "2."


@pytest.mark.slow
def test_allowing_on_another_replica_reaches_the_run_and_sticks(tmp_path: Path) -> None:
    turns = [calculate("6 * 7", "call_1"), calculate("6 * 8", "call_2"), Turn.text("42 and 48.")]
    with ScriptedModelServer(turns) as model, postgres_schema("allow") as url, ExitStack() as stack:
        servers = []
        for name in ("a", "b"):
            (tmp_path / name).mkdir()
            server = serve_in_thread(tmp_path / name, model, db_url=url, agents=CAREFUL, server=LEASE | QUICK)
            servers.append(stack.enter_context(server))
        a, b = servers
        on_a, on_b = a.http(), b.http()
        chat_id = on_a.post("/api/chats", json={}).json()["id"]
        with EventReader(on_b, chat_id) as events:
            on_a.post(f"/api/chats/{chat_id}/messages", json={"content": "6 * 7, 6 * 8?"})
            assert asked(events.until("approval_requested")) == ["call_1"]
            allowed = on_b.post(
                f"/api/chats/{chat_id}/approvals/call_1", json={"approved": True, "for_chat": True}
            )
            assert allowed.status_code == 204
            run = events.until("final")
    finished = [event for event in run if event["type"] == "tool_call_finished"]
    assert [event["result_preview"] for event in finished] == ["42", "48"]
    assert run[-1]["result"]["output"] == "42 and 48."
