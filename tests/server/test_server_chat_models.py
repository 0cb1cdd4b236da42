"""A chat's model: the models a chat may use, switching a chat to one of them (its next run answers with
it), and each stored answer saying which model wrote it."""

from __future__ import annotations

from pathlib import Path

from server_helpers import EventReader, serve_in_thread

from toolbridge.testing import ScriptedModelServer, Turn


def test_a_chat_switched_to_another_model_answers_with_it_and_says_so(tmp_path: Path) -> None:
    with (
        ScriptedModelServer([Turn.text("From the scripted model.")]) as model,
        serve_in_thread(tmp_path, model, models={"stand-in": {"provider": "demo"}}) as server,
    ):
        http = server.http()
        offered = http.get("/api/models").json()
        assert offered["default"] == "scripted"
        assert [entry["name"] for entry in offered["models"]] == ["scripted", "stand-in"]
        assert offered["models"][1] == {"name": "stand-in", "provider": "demo", "model": None}

        refused = http.post("/api/chats", json={"model": "gpt-5"})
        assert refused.status_code == 422
        assert "the choices are scripted, stand-in" in refused.json()["error"]["message"]
        chat = http.post("/api/chats", json={}).json()
        assert chat["model"] is None  # its agent's
        assert http.patch(f"/api/chats/{chat['id']}", json={"model": "gpt-5"}).status_code == 422
        assert http.patch(f"/api/chats/{chat['id']}", json={}).status_code == 400
        switched = http.patch(f"/api/chats/{chat['id']}", json={"model": "stand-in"})
        assert switched.status_code == 200, switched.text
        assert switched.json()["model"] == "stand-in"
        assert switched.json()["title"] == ""  # the title is not touched

        with EventReader(http, chat["id"]) as events:
            http.post(f"/api/chats/{chat['id']}/messages", json={"content": "Hello"}).raise_for_status()
            first = events.until("final")
            assert first[0]["model"] == "stand-in"
            back = http.patch(f"/api/chats/{chat['id']}", json={"model": None})
            assert back.json()["model"] is None
            http.post(f"/api/chats/{chat['id']}/messages", json={"content": "Again"}).raise_for_status()
            second = events.until("final")
        assert second[0]["model"] == "scripted"

        messages = http.get(f"/api/chats/{chat['id']}/messages").json()
        answers = [
            (message.get("model"), message["content"])
            for message in messages
            if message["role"] == "assistant"
        ]
        assert [by for by, _ in answers] == ["stand-in", "scripted"]
        assert answers[1][1] == "From the scripted model."
        assert all("model" not in message for message in messages if message["role"] == "user")
        (listed,) = http.get("/api/chats").json()
        assert (listed["model"], listed["answered_by"]) == (None, "scripted")
