"""SIGKILL `toolbridge serve` in the middle of a streamed reply that follows a completed tool call, then
restart it on the same SQLite database: every completed message is there, the database is intact, and
the chat goes on from where it was."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import pytest
from server_helpers import EventReader, start_process, write_config

from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow


def test_killed_mid_reply_keeps_every_completed_message(tmp_path: Path) -> None:
    db_path = tmp_path / "chats.db"
    db_url = f"sqlite:///{db_path}"
    slow_reply = Turn.text(
        "Let me count to one hundred: " + "1 2 3 4 5 6 7 8 9 " * 40, chunk_size=2, delay=0.05
    )
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "6 * 7"}, id="call_before_crash")),
        slow_reply,
    ]

    with ScriptedModelServer(turns) as model:
        first = start_process(write_config(tmp_path, model), db_url)
        try:
            http = first.server.http()
            chat_id = http.post("/api/chats", json={"agent": "default"}).json()["id"]
            with EventReader(http, chat_id) as events:
                http.post(f"/api/chats/{chat_id}/messages", json={"content": "What is 6 * 7? Then count."})
                events.until("tool_call_finished")
                while (event := events.next())["type"] != "text_delta":
                    pass
                assert event["step"] == 2  # the answer is streaming
                first.kill()
        finally:
            first.stop()
        assert model.wait_for_reply(2).client_disconnected  # killed before the reply was done

    def sees_the_stored_history(request: RecordedRequest) -> bool:
        roles = [m["role"] for m in request.messages]
        return (
            roles == ["system", "user", "assistant", "tool", "user"]
            and request.messages[3]["content"] == "42"
        )

    with ScriptedModelServer(
        [Turn.text("Sorry, I was cut off. 6 * 7 = 42.", expect=sees_the_stored_history)]
    ) as model:
        second = start_process(write_config(tmp_path, model), db_url)
        try:
            http = second.server.http()
            after_restart = http.get(f"/api/chats/{chat_id}/messages").json()
            stats = http.get("/api/stats").json()
            with sqlite3.connect(db_path) as db:
                assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            with EventReader(http, chat_id) as events:
                http.post(f"/api/chats/{chat_id}/messages", json={"content": "Are you there?"})
                final = events.until("final")[-1]
        finally:
            second.stop()

    assert [m["role"] for m in after_restart] == ["user", "assistant", "tool"]
    assert after_restart[0]["content"] == "What is 6 * 7? Then count."
    assert after_restart[1]["tool_calls"][0]["id"] == "call_before_crash"
    assert after_restart[2]["result"]["call_id"] == "call_before_crash"
    assert after_restart[2]["result"]["content"] == [{"type": "text", "text": "42"}]
    assert [(s["tool"], s["calls"]) for s in stats] == [("calculate", 1)]
    assert final["result"]["output"] == "Sorry, I was cut off. 6 * 7 = 42."


def test_killed_during_a_tool_call_the_chat_goes_on(tmp_path: Path) -> None:
    """The call's result was never stored: on resume it gets an "interrupted" one, so the request is
    well-formed (OpenAI and Anthropic reject calls without results) and the chat goes on."""
    db_url = f"sqlite:///{tmp_path / 'chats.db'}"
    basic = {"command": sys.executable, "args": [str(Path(__file__).parent.parent / "servers" / "basic.py")]}
    turns = [Turn.tool_calls(ToolCallSpec("sleep", {"ms": 60_000}, id="call_killed"))]

    with ScriptedModelServer(turns) as model:
        first = start_process(write_config(tmp_path, model, mcp_servers={"basic": basic}), db_url)
        try:
            http = first.server.http()
            chat_id = http.post("/api/chats", json={"agent": "default"}).json()["id"]
            with EventReader(http, chat_id) as events:
                http.post(f"/api/chats/{chat_id}/messages", json={"content": "Sleep a minute."})
                events.until("tool_call_started")
                first.kill()
        finally:
            first.stop()

    def answers_the_killed_call(request: RecordedRequest) -> bool:
        roles = [m["role"] for m in request.messages]
        killed = request.messages[3] if len(roles) > 3 else {}
        return (
            roles == ["system", "user", "assistant", "tool", "user"]
            and killed.get("tool_call_id") == "call_killed"
            and "interrupted: no result was recorded" in killed.get("content", "")
        )

    with ScriptedModelServer(
        [Turn.text("I was interrupted; shall I retry?", expect=answers_the_killed_call)]
    ) as model:
        second = start_process(write_config(tmp_path, model, mcp_servers={"basic": basic}), db_url)
        try:
            http = second.server.http()
            with EventReader(http, chat_id) as events:
                http.post(f"/api/chats/{chat_id}/messages", json={"content": "Did it finish?"})
                final = events.until("final")[-1]
        finally:
            second.stop()

    assert final["result"]["output"] == "I was interrupted; shall I retry?"
