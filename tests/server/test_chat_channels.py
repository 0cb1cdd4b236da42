"""A replica keeps a chat's live state (run, event streams, pending approvals) only while there is some:
a long-running server does not grow with every chat it has ever served."""

from __future__ import annotations

import time
from pathlib import Path

from server_helpers import EventReader, RunningServer, serve_in_thread

from toolbridge.server._chats import ChatHub
from toolbridge.testing import ScriptedModel, Turn

DEADLINE = 10.0


def hub(server: RunningServer) -> ChatHub:
    chats: ChatHub = server.app.state.toolbridge.chats
    return chats


def wait_for_no_live_chats(server: RunningServer) -> frozenset[int]:
    """The chats still live once every stream has closed server-side (it notices a hang-up soon after)."""
    deadline = time.monotonic() + DEADLINE
    while (live := hub(server).live_chats) and time.monotonic() < deadline:
        time.sleep(0.02)
    return live


def test_chats_run_and_streamed_leave_nothing_behind(tmp_path: Path) -> None:
    chats = 4
    with (
        ScriptedModel([Turn.text(f"Answer {n}.") for n in range(chats)]) as model,
        serve_in_thread(tmp_path, model) as server,
    ):
        http = server.http()
        chat_ids = [http.post("/api/chats", json={}).json()["id"] for _ in range(chats)]
        for chat_id in chat_ids[:-1]:
            with EventReader(http, chat_id) as events:
                http.post(f"/api/chats/{chat_id}/messages", json={"content": "Hi"})
                assert events.until("final")[-1]["type"] == "final"
        # One run nobody watches: its channel goes when the run ends.
        unwatched = chat_ids[-1]
        assert http.post(f"/api/chats/{unwatched}/messages", json={"content": "Hi"}).status_code == 202

        assert wait_for_no_live_chats(server) == frozenset()
        assert http.get(f"/api/chats/{unwatched}/messages").json()[-1]["role"] == "assistant"
        # Looking a chat up (nothing to cancel, no approval waiting) keeps nothing either.
        assert http.post(f"/api/chats/{chat_ids[0]}/cancel").status_code == 404
        assert (
            http.post(f"/api/chats/{chat_ids[0]}/approvals/nope", json={"approved": True}).status_code == 404
        )
        assert hub(server).live_chats == frozenset()
        # A kept chat comes back to life as before.
        with EventReader(http, chat_ids[0]):
            assert hub(server).live_chats == {chat_ids[0]}
