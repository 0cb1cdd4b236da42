"""A replica keeps a chat's live state (run, event streams, pending approvals) only while there is some:
a long-running server does not grow with every chat it has ever served."""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from server_helpers import EventReader, RunningServer, serve_in_thread

from toolbridge.runs.channels import Channel
from toolbridge.runs.feed import Follower
from toolbridge.runs.ledger import RunLedger
from toolbridge.runs.writer import EventWriter
from toolbridge.server.web.chats import ChatHub
from toolbridge.store import Store
from toolbridge.testing import ScriptedModelServer, Turn

DEADLINE = 10.0


def hub(server: RunningServer) -> ChatHub:
    chats: ChatHub = server.app.state.toolbridge.chats
    return chats


def wait_for_no_live_chats(server: RunningServer) -> frozenset[int]:
    """The chats still live once every stream has closed server-side (it notices a hang-up soon after)."""
    deadline = time.monotonic() + DEADLINE
    while (live := hub(server).live.chat_ids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return live


def test_chats_run_and_streamed_leave_nothing_behind(tmp_path: Path) -> None:
    chats = 4
    with (
        ScriptedModelServer([Turn.text(f"Answer {n}.") for n in range(chats)]) as model,
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
        assert hub(server).live.chat_ids == frozenset()
        # A kept chat comes back to life as before.
        with EventReader(http, chat_ids[0]):
            assert hub(server).live.chat_ids == {chat_ids[0]}


@pytest.mark.anyio
async def test_an_event_published_while_the_runs_end_is_written_still_reaches_the_streams(
    tmp_path: Path,
) -> None:
    """A server's note (a page opened for it was completed) may come as the run ends: its writer has
    taken its last events already, so the note goes to the streams as it is rather than nowhere."""
    with Store(f"sqlite:///{tmp_path / 'toolbridge.db'}") as store:
        chat_id = store.create_chat().id
        RunLedger.of(store).claim("r1", chat_id, replica="here", lease=30)
        channel = Channel(run_id="r1", ending=True)
        channel.writer = EventWriter(RunLedger.of(store), "r1", chat_id, channel.deliver)
        follower = Follower()
        channel.feed.add(follower)
        note = '{"type": "server_request_completed"}'
        with anyio.fail_after(DEADLINE):
            # Published once `end` has taken what was queued (here: when the run is over in the database).
            await channel.writer.end("completed", ['{"type": "final"}'], lambda: channel.publish(note))
            frames = [frame async for frame in _first_frames(channel, follower, store, chat_id, count=2)]
    assert f"data: {note}\n\n" in frames


async def _first_frames(
    channel: Channel, follower: Follower, store: Store, chat_id: int, *, count: int
) -> AsyncIterator[str]:
    sent = 0
    async for frame in follower.frames(channel.feed, RunLedger.of(store), chat_id, math.inf):
        yield frame
        sent += 1
        if sent == count:
            return
