"""The result cache in the server: each chat (and each OpenAI-endpoint request) has its own entries, so
one conversation never gets an answer another one's tools produced."""

from __future__ import annotations

import sys
from pathlib import Path

from server_helpers import EventReader, RunningServer, serve_in_thread

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

NOTEBOOK = {
    "command": sys.executable,
    "args": [str(Path(__file__).parent.parent / "servers" / "notebook.py")],
}
READ = ToolCallSpec("read_note", {"name": "n"})


def ask_in_chat(server: RunningServer, chat_id: int, question: str) -> list[str]:
    """Run one question in the chat; the results of its tool calls, marked `(cached)` where they were."""
    http = server.http()
    with EventReader(http, chat_id) as events:
        http.post(f"/api/chats/{chat_id}/messages", json={"content": question})
        run = events.until("final")
    return [
        event["result_preview"] + (" (cached)" if event["cached"] else "")
        for event in run
        if event["type"] == "tool_call_finished"
    ]


def test_each_chat_has_its_own_cache_entries(tmp_path: Path) -> None:
    turns = [Turn.tool_calls(READ), Turn.text("Read."), Turn.tool_calls(READ), Turn.text("Read again.")]
    turns += [Turn.tool_calls(READ), Turn.text("Read in the other chat.")]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"notebook": NOTEBOOK}, cache={"ttl": 300}) as server,
    ):
        http = server.http()
        first_chat, second_chat = (http.post("/api/chats", json={}).json()["id"] for _ in range(2))
        first = ask_in_chat(server, first_chat, "Read n.")
        again = ask_in_chat(server, first_chat, "Read n again.")
        elsewhere = ask_in_chat(server, second_chat, "Read n.")

    assert first == ["n: (empty) (read 1)"]
    assert again == ["n: (empty) (read 1) (cached)"]
    assert elsewhere == ["n: (empty) (read 2)"]


def test_each_openai_request_has_its_own_cache_entries(tmp_path: Path) -> None:
    # A request names no conversation: it may reuse its own results, never an earlier request's.
    turns = [Turn.tool_calls(READ), Turn.tool_calls(READ), Turn.text("Read twice.")]
    turns += [Turn.tool_calls(READ), Turn.text("Read in the next request.")]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"notebook": NOTEBOOK}, cache={"ttl": 300}) as server,
    ):
        for _ in range(2):
            server.openai().chat.completions.create(
                model="default", messages=[{"role": "user", "content": "Read n."}]
            )
        calls = server.http().get("/api/stats").json()

    (read,) = calls
    assert (read["calls"], read["cache_hits"]) == (3, 1)
