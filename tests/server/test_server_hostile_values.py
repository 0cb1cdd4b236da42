"""A lone surrogate from the model never makes a chat unreadable (issue 9, item 4).

Before: the call's arguments crashed the run in the cache key, the stored chat answered 500 on
`GET /messages` from then on, and every later message in it failed."""

from __future__ import annotations

import sys
from pathlib import Path

from server_helpers import EventReader, serve_in_thread

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

NOTEBOOK = {
    "command": sys.executable,
    "args": [str(Path(__file__).parent.parent / "servers" / "notebook.py")],
}


def test_a_lone_surrogate_from_the_model_leaves_the_chat_readable(tmp_path: Path) -> None:
    turns = [
        Turn.tool_calls(ToolCallSpec("read_note", '{"name": "n\\ud800"}', id="call_bad")),
        Turn.text("Sorry \ud800 about that."),
        Turn.text("Still here."),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"notebook": NOTEBOOK}, cache={"ttl": 300}) as server,
    ):
        http = server.http()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        with EventReader(http, chat_id) as events:
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "Read the note."})
            first = events.until("final")[-1]
        messages = http.get(f"/api/chats/{chat_id}/messages")
        with EventReader(http, chat_id) as events:
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "Are you there?"})
            second = events.until("final")[-1]
        listed = http.get("/api/chats")

    assert first["result"]["output"] == "Sorry \ufffd about that."
    assert messages.status_code == 200, messages.text
    stored = messages.json()
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[2]["result"]["error_kind"] == "invalid_arguments"
    assert "lone UTF-16 surrogate" in stored[2]["result"]["content"][0]["text"]
    assert stored[3]["content"] == "Sorry \ufffd about that."
    assert second["result"]["output"] == "Still here."
    assert listed.status_code == 200
