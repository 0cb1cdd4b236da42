"""Rules follow the tool in `serve`: two real `files` servers share `delete_file` (exposed as
`a__delete_file` and `h__delete_file`), and rules written for `delete_file` still hold on the web page's
JSON API, on `/v1/chat/completions` and on tools over HTTP (`/tools/{name}`, `/openapi.json`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from server_helpers import EventReader, serve_in_thread

from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

FILES = str(Path(__file__).resolve().parent.parent / "servers" / "files.py")
TWO_FILE_SERVERS = {name: {"command": sys.executable, "args": [FILES]} for name in ("a", "h")}
ALWAYS_ASK = {"default": {"approval": {"tools": {"delete_file": "always"}}}}


def last_tool_result(request: RecordedRequest) -> str:
    last = request.messages[-1]
    assert last["role"] == "tool", last
    return str(last["content"])


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "precious.txt"
    path.write_text("keep me")
    return path


def test_the_page_asks_before_the_renamed_tool_runs(tmp_path: Path, victim: Path) -> None:
    turns = [
        Turn.tool_calls(ToolCallSpec("h__delete_file", {"path": str(victim)}, id="call_rm")),
        Turn.text("Kept.", expect=lambda request: "declined" in last_tool_result(request)),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, agents=ALWAYS_ASK, mcp_servers=TWO_FILE_SERVERS) as server,
    ):
        http = server.http()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        with EventReader(http, chat_id) as events:
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "Delete it"})
            asked = events.until("approval_requested")[-1]
            assert asked["call"]["id"] == "call_rm"
            assert asked["reason"] == "the approval rule for tool 'delete_file' says 'always'"
            assert victim.exists()
            answered = http.post(f"/api/chats/{chat_id}/approvals/call_rm", json={"approved": False})
            assert answered.status_code == 204
            assert events.until("final")[-1]["result"]["output"] == "Kept."
    assert victim.exists()


@pytest.mark.parametrize(
    ("agents", "told"),
    [
        (ALWAYS_ASK, "needs the user's approval"),
        ({"default": {"tools": {"deny": ["delete_file"]}}}, "is not allowed here (the agent 'default''s"),
    ],
)
def test_v1_does_not_run_the_renamed_tool_against_a_rule(
    tmp_path: Path, victim: Path, agents: dict[str, Any], told: str
) -> None:
    turns = [
        Turn.tool_calls(ToolCallSpec("h__delete_file", {"path": str(victim)})),
        Turn.text("Kept.", expect=lambda request: told in last_tool_result(request)),
    ]
    question = [{"role": "user", "content": "Delete it"}]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, agents=agents, mcp_servers=TWO_FILE_SERVERS) as server,
    ):
        completion = server.openai().chat.completions.create(model="default", messages=question)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "Kept."
    assert victim.exists()


@pytest.mark.parametrize(
    "rules",
    [
        {"deny": ["delete_file"]},
        {"deny": ["h:*"]},
        {"allow": ["a__*", "read_file"]},
    ],
)
def test_tools_over_http_keep_the_default_agents_tool_rules(
    tmp_path: Path, victim: Path, rules: dict[str, Any]
) -> None:
    agents = {"default": {"tools": rules}}
    with serve_in_thread(tmp_path, None, agents=agents, mcp_servers=TWO_FILE_SERVERS) as server:
        http = server.http()
        refused = http.post("/tools/h__delete_file", json={"path": str(victim)})
        listed = http.get("/openapi.json").json()["paths"]
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["code"] == "not_allowed"
    assert (
        "delete_file' is not allowed here (the agent 'default''s tool rules (its servers, "
        "tools.allow and tools.deny) leave it out), so nothing ran." in error["message"]
    )
    assert victim.exists()
    assert "/tools/h__delete_file" not in listed
