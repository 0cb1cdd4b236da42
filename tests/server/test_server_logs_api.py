"""What servers report, through a running `toolbridge serve`: `GET /api/servers/{name}/logs` (the log
messages, kept as they accumulate) and the progress of a call in the OpenAI endpoint's tool activity."""

from __future__ import annotations

import sys
from pathlib import Path

from server_helpers import EventReader, serve_in_thread

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

REPORTS = str(Path(__file__).parent.parent / "servers" / "reports.py")


def test_a_servers_log_messages_accumulate_and_are_listed(tmp_path: Path) -> None:
    servers = {
        "reports": {"command": sys.executable, "args": [REPORTS], "log_level": "info"},
        "gone": {"command": "toolbridge-no-such-server"},
    }
    script = [
        Turn.tool_calls(ToolCallSpec("say", {"level": "error", "text": "disk full"})),
        Turn.text("Said."),
    ]
    with (
        ScriptedModelServer(script) as model,
        serve_in_thread(tmp_path, model, mcp_servers=servers) as server,
    ):
        http = server.http()
        at_connect = http.get("/api/servers/reports/logs").json()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        with EventReader(http, chat_id) as events:
            answered = http.post(f"/api/chats/{chat_id}/messages", json={"content": "Say it."})
            events.until("final")
        after_the_call = http.get("/api/servers/reports/logs").json()
        unknown = http.get("/api/servers/nobody/logs")
        unreachable = http.get("/api/servers/gone/logs")

    assert [(e["level"], e["logger"], e["text"]) for e in at_connect] == [
        ("notice", "setup", "log level set to info")
    ]
    assert answered.status_code < 300, answered.text
    assert [e["text"] for e in after_the_call] == ["log level set to info", "disk full"]
    assert unknown.status_code == 404
    assert "no MCP server named 'nobody'" in unknown.json()["error"]["message"]
    assert unreachable.status_code == 502
    assert "toolbridge-no-such-server" in unreachable.json()["error"]["message"]


def test_the_openai_endpoint_shows_a_calls_progress_in_its_tool_activity(tmp_path: Path) -> None:
    servers = {"reports": {"command": sys.executable, "args": [REPORTS]}}
    script = [Turn.tool_calls(ToolCallSpec("crunch", {"steps": 2, "step_ms": 1})), Turn.text("Crunched.")]
    with (
        ScriptedModelServer(script) as model,
        serve_in_thread(tmp_path, model, mcp_servers=servers) as server,
    ):
        completion = server.openai().chat.completions.create(
            model="default",
            messages=[{"role": "user", "content": "Crunch it."}],
        )

    activity = (completion.choices[0].message.model_extra or {})["reasoning_content"]
    assert "… crunch 50% step 1 of 2\n… crunch 100% step 2 of 2\n✓ crunch" in activity
