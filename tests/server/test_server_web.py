"""The web page's JSON API over real HTTP: chats, a run's events over SSE to the final event, the messages
stored, an approval round trip (approve and deny), late joiners, stats, tools and servers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from server_helpers import EventReader, serve_in_thread

from toolbridge.agent import AgentDefinition
from toolbridge.store import Store
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

CAREFUL = {"default": {"approval": {"tools": {"calculate": "always"}}}}


def last_tool_result(request: RecordedRequest) -> str:
    last = request.messages[-1]
    assert last["role"] == "tool", last
    return str(last["content"])


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def test_a_chat_runs_streams_its_events_and_stores_every_message(tmp_path: Path) -> None:
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"}, id="call_sum")),
        Turn.text("The answer is 42.", expect=lambda request: last_tool_result(request) == "42"),
    ]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        http = server.http()
        created = http.post("/api/chats", json={"agent": "default"})
        assert created.status_code == 201
        chat = created.json()
        assert set(chat) == {"id", "title", "agent", "model", "answered_by", "message_count", "updated_at"}
        assert chat["agent"] == "default"
        assert chat["message_count"] == 0

        with EventReader(http, chat["id"]) as events:
            posted = http.post(f"/api/chats/{chat['id']}/messages", json={"content": "What is 15 + 27?"})
            assert posted.status_code == 202
            run_events = events.until("final")

        messages = http.get(f"/api/chats/{chat['id']}/messages").json()
        chats = http.get("/api/chats").json()

    assert run_events[0] == {"type": "run_started", "run_id": posted.json()["run_id"], "model": "scripted"}
    assert types(run_events) == [
        "run_started",
        "message_added",
        "step_started",
        "step_finished",
        "message_added",
        "tool_call_started",
        "tool_call_finished",
        "message_added",
        "step_started",
        *["text_delta"] * 5,
        "step_finished",
        "message_added",
        "final",
    ]
    added = [e["message"]["role"] for e in run_events if e["type"] == "message_added"]
    assert added == ["user", "assistant", "tool", "assistant"]
    started = next(e for e in run_events if e["type"] == "tool_call_started")
    assert started["call"] == {
        "name": "calculate",
        "arguments": {"expression": "15 + 27"},
        "id": "call_sum",
        "source": None,
    }
    assert started["server"] == "native"
    finished = next(e for e in run_events if e["type"] == "tool_call_finished")
    assert (finished["result_preview"], finished["cached"]) == ("42", False)
    assert "".join(e["text"] for e in run_events if e["type"] == "text_delta") == "The answer is 42."
    assert run_events[-1]["result"]["output"] == "The answer is 42."

    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[0]["content"] == "What is 15 + 27?"
    assert messages[1]["tool_calls"][0]["id"] == "call_sum"
    assert messages[2]["name"] == "calculate"
    assert messages[2]["result"]["content"] == [{"type": "text", "text": "42"}]
    assert messages[3]["content"] == "The answer is 42."
    assert chats[0]["id"] == chat["id"]
    assert chats[0]["title"] == "What is 15 + 27?"
    assert chats[0]["message_count"] == 4


def test_approval_round_trip_late_joiner_and_busy_chat(tmp_path: Path) -> None:
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "6 * 7"}, id="call_ok")),
        Turn.text("42.", expect=lambda request: last_tool_result(request) == "42"),
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "1 / 0"}, id="call_no")),
        Turn.text("Fine, I won't.", expect=lambda request: "declined" in last_tool_result(request)),
    ]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model, agents=CAREFUL) as server:
        http = server.http()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        with EventReader(http, chat_id) as events:
            run_id = http.post(f"/api/chats/{chat_id}/messages", json={"content": "6 * 7?"}).json()["run_id"]
            before = events.until("approval_requested")
            assert before[-1]["call"]["id"] == "call_ok"
            assert "always" in before[-1]["reason"]

            # The run waits for the answer: the chat is busy, and a page opened now sees the run so far.
            busy = http.post(f"/api/chats/{chat_id}/messages", json={"content": "again"})
            assert busy.status_code == 409
            with EventReader(server.http(), chat_id) as late:
                replayed = [late.next() for _ in before]
            assert replayed == before
            assert replayed[0] == {"type": "run_started", "run_id": run_id, "model": "scripted"}

            assert (
                http.post(f"/api/chats/{chat_id}/approvals/call_unknown", json={"approved": True}).status_code
                == 404
            )
            assert (
                http.post(f"/api/chats/{chat_id}/approvals/call_ok", json={"approved": True}).status_code
                == 204
            )
            after = events.until("final")
            decided = next(e for e in after if e["type"] == "approval_decided")
            assert decided == {"type": "approval_decided", "step": 1, "call_id": "call_ok", "approved": True}
            finished = next(e for e in after if e["type"] == "tool_call_finished")
            assert (finished["is_error"], finished["result_preview"]) == (False, "42")
            assert after[-1]["result"]["output"] == "42."

            http.post(f"/api/chats/{chat_id}/messages", json={"content": "1 / 0?"})
            events.until("approval_requested")
            assert (
                http.post(f"/api/chats/{chat_id}/approvals/call_no", json={"approved": False}).status_code
                == 204
            )
            denied = events.until("final")
            assert denied[-1]["result"]["output"] == "Fine, I won't."

        messages = http.get(f"/api/chats/{chat_id}/messages").json()
        stats = http.get("/api/stats", params={"since": "1h"}).json()

    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"] * 2
    assert messages[6]["result"]["is_error"] is True
    (calculate,) = stats
    assert (calculate["tool"], calculate["server"], calculate["calls"], calculate["succeeded"]) == (
        "calculate",
        "native",
        2,
        1,
    )
    # The declined call is counted, but not as a failure of the tool.
    assert (calculate["denied"], calculate["failed"], calculate["success_rate"]) == (1, 0, 1.0)
    assert calculate["last_error"] is None


def test_stats_count_calls_and_cache_hits_from_both_endpoints(tmp_path: Path) -> None:
    same_sum = ToolCallSpec("calculate", {"expression": "15 + 27"})
    turns = [Turn.tool_calls(same_sum), Turn.text("42."), Turn.tool_calls(same_sum), Turn.text("Still 42.")]
    shared_cache = {"ttl": 300, "scope": "shared"}
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model, cache=shared_cache) as server:
        http = server.http()
        chat_id = http.post("/api/chats", json={"agent": "default"}).json()["id"]
        with EventReader(http, chat_id) as events:
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "15 + 27?"})
            events.until("final")
        server.openai().chat.completions.create(
            model="default", messages=[{"role": "user", "content": "15 + 27?"}]
        )
        stats = http.get("/api/stats").json()
        bad_since = http.get("/api/stats", params={"since": "yesterday-ish"})

    (calculate,) = stats
    assert calculate["calls"] == 2
    assert calculate["cache_hits"] == 1  # read-only, and the cache is shared: the second call is a hit
    assert calculate["success_rate"] == 1.0
    assert 0 <= calculate["p50"] <= calculate["p95"]
    # What the Stats page draws: every latency bucket, and calls over time up to now.
    buckets = calculate["latency"]["buckets"]
    assert buckets[-1]["le"] is None
    assert sum(bucket["count"] for bucket in buckets) == 2
    assert calculate["latency"]["p50"] <= calculate["latency"]["p99"] <= calculate["latency"]["max"]
    assert sum(calculate["calls_over_time"]["calls"]) == 2
    assert calculate["calls_over_time"]["bucket_seconds"] == 60
    assert bad_since.status_code == 400
    assert bad_since.json()["error"]["param"] == "since"


def test_a_call_stopped_while_it_runs_is_counted_as_cancelled(tmp_path: Path) -> None:
    basic = {"command": sys.executable, "args": [str(Path(__file__).parent.parent / "servers" / "basic.py")]}
    turns = [Turn.tool_calls(ToolCallSpec("sleep", {"ms": 60_000}, id="call_slow"))]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"basic": basic}) as server,
    ):
        http = server.http()
        chat_id = http.post("/api/chats", json={"agent": "default"}).json()["id"]
        with EventReader(http, chat_id) as events:
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "Sleep a minute."})
            events.until("tool_call_started")
            assert http.post(f"/api/chats/{chat_id}/cancel").status_code == 204
            assert events.until("final")[-1]["result"]["stop_reason"] == "cancelled"
        stats = http.get("/api/stats").json()

    (sleep,) = stats
    assert (sleep["tool"], sleep["server"], sleep["calls"], sleep["cancelled"]) == ("sleep", "basic", 1, 1)
    assert (sleep["failed"], sleep["success_rate"], sleep["last_error"]) == (0, None, None)


def test_agents_tools_servers_and_not_found(tmp_path: Path) -> None:
    basic = {"command": sys.executable, "args": [str(Path(__file__).parent.parent / "servers" / "basic.py")]}
    agents = {"helper": {"description": "Helps.", "model": "scripted", "servers": []}}
    with Store(f"sqlite:///{tmp_path / 'toolbridge.db'}") as store:  # the database the server opens
        store.create_agent(AgentDefinition(name="stored", description="Kept.", model="demo"))
    with (
        ScriptedModelServer([]) as model,
        serve_in_thread(tmp_path, model, agents=agents, mcp_servers={"basic": basic}) as server,
    ):
        http = server.http()
        listed_agents = http.get("/api/agents").json()
        servers = http.get("/api/servers").json()
        tools = http.get("/api/tools").json()
        helper_tools = http.get("/api/tools", params={"agent": "helper"}).json()
        unknown_agent = http.post("/api/chats", json={"agent": "nobody"})
        missing_chat = http.get("/api/chats/999/messages")
        chat_id = http.post("/api/chats", json={}).json()["id"]
        empty_message = http.post(f"/api/chats/{chat_id}/messages", json={"content": ""})
        page = http.get("/")

    assert listed_agents == [
        {"name": "default", "description": "", "model": None, "source": "built-in", "problem": None},
        {"name": "helper", "description": "Helps.", "model": "scripted", "source": "config", "problem": None},
        {"name": "stored", "description": "Kept.", "model": "demo", "source": "database", "problem": None},
    ]
    (status,) = servers
    assert (status["name"], status["transport"], status["state"], status["last_error"]) == (
        "basic",
        "stdio",
        "connected",
        None,
    )
    assert status["tool_count"] == sum(1 for tool in tools if tool["source"] == "basic") > 0
    assert {tool["source"] for tool in helper_tools} == {"native"}
    assert unknown_agent.status_code == 404
    assert (
        "no agent named 'nobody'; the agents are: default, helper, stored"
        in unknown_agent.json()["error"]["message"]
    )
    assert missing_chat.status_code == 404
    assert "no chat 999" in missing_chat.json()["error"]["message"]
    assert empty_message.status_code == 400
    assert empty_message.json()["error"]["param"] == "content"
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]


def test_a_run_can_be_stopped_and_keeps_what_it_completed(tmp_path: Path) -> None:
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "6 * 7"}, id="call_first")),
        Turn.text("Counting slowly: " + "1 2 3 " * 200, chunk_size=2, delay=0.05),
    ]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        http = server.http()
        chat_id = http.post("/api/chats", json={"agent": "default"}).json()["id"]
        assert http.post(f"/api/chats/{chat_id}/cancel").status_code == 404  # nothing to stop yet
        with EventReader(http, chat_id) as events:
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "6 * 7, then count"})
            events.until("tool_call_finished")
            while events.next()["type"] != "text_delta":
                pass  # the slow answer is streaming
            assert http.post(f"/api/chats/{chat_id}/cancel").status_code == 204
            final = events.until("final")[-1]
        assert final["result"]["stop_reason"] == "cancelled"
        assert model.wait_for_reply(2).client_disconnected
        roles = [message["role"] for message in http.get(f"/api/chats/{chat_id}/messages").json()]
        assert roles[:3] == ["user", "assistant", "tool"]
