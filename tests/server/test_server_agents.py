"""The server's agents are the one catalog: a stored agent whose model the config no longer has fails
with a message naming where the agent is defined."""

from __future__ import annotations

from pathlib import Path

from server_helpers import serve_in_thread

from toolbridge.agent import AgentDefinition
from toolbridge.store import Store


def test_a_stored_agent_whose_model_is_gone_says_where_it_is_defined(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'toolbridge.db'}"  # the database serve_in_thread opens
    with Store(db_url) as store:
        store.create_agent(AgentDefinition(name="stored", model="gone"))
        where = store.safe_url
    with serve_in_thread(tmp_path, None) as server:
        http = server.http()
        chat_id = http.post("/api/chats", json={"agent": "stored"}).json()["id"]
        posted = http.post(f"/api/chats/{chat_id}/messages", json={"content": "hi"})
        completion = http.post(
            "/v1/chat/completions", json={"model": "stored", "messages": [{"role": "user", "content": "hi"}]}
        )

    for response in (posted, completion):
        assert response.status_code == 503
        message = response.json()["error"]["message"]
        assert f"agent 'stored' (defined in the database {where}) uses model 'gone'" in message
        assert "no model named 'gone'" in message
