"""A replica reads a chat's new event rows once per notice, however many of its streams watch the chat,
on real PostgreSQL: each stream still starts from its own last id, and one that falls far behind reads on
its own without holding the others back or losing anything."""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from server_helpers import EventReader, serve_in_thread

from postgres_schemas import postgres_schema
from toolbridge.runs.feed import ChatFeed, Follower, follow_events
from toolbridge.runs.ledger import RunEvent, RunLedger
from toolbridge.store import Store

WAIT = 20.0
ELSEWHERE = "another replica (the test)"
"""The owner of the test's runs: the test writes their events as the replica running them would."""


@contextmanager
def counting_reads(ledger: RunLedger) -> Iterator[list[int]]:
    """Every `events_after` the ledger runs from now on, as the id it read after (in the list yielded)."""
    reads: list[int] = []
    read = ledger.events_after

    def counted(chat_id: int, after: int, *, limit: int = 1000) -> list[RunEvent]:
        reads.append(after)
        return read(chat_id, after, limit=limit)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ledger, "events_after", counted)
        yield reads


def event(n: int) -> str:
    return json.dumps({"type": "text_delta", "text": f"{n} "})


def test_streams_of_one_chat_share_one_read_per_notice_each_from_its_own_id(tmp_path: Path) -> None:
    notices = 8
    with (
        postgres_schema("feed") as url,
        Store(url) as writer,
        serve_in_thread(tmp_path, None, db_url=url) as server,
        ExitStack() as streams,
    ):
        ledger: RunLedger = server.app.state.toolbridge.chats.ledger
        http = server.http()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        RunLedger.of(writer).claim("run-1", chat_id, replica=ELSEWHERE, lease=60)
        readers = [streams.enter_context(EventReader(server.http(), chat_id)) for _ in range(4)]

        def write_and_see(*numbers: int, on: list[EventReader]) -> None:
            """Write the events as another replica does (one transaction, one NOTIFY); every stream in
            `on` gets them, in order."""
            RunLedger.of(writer).append("run-1", chat_id, [event(n) for n in numbers])
            for reader in on:
                assert [reader.next()["text"] for _ in numbers] == [f"{n} " for n in numbers]

        write_and_see(0, on=readers)  # every stream has caught up with the chat
        seen_at: dict[int, int | None] = {}
        with counting_reads(ledger) as reads:
            for n in range(1, notices + 1):
                write_and_see(n, n + 100, on=readers)
                seen_at[n] = readers[0].last_id
            assert len(reads) == notices, f"{len(reads)} reads for {notices} notices (4 streams)"

            # A stream resuming from an id of its own replays from there, then shares the read.
            resumed = streams.enter_context(EventReader(server.http(), chat_id, last_event_id=seen_at[6]))
            assert [resumed.next()["text"] for _ in range(4)] == ["7 ", "107 ", "8 ", "108 "]
            assert resumed.last_id == seen_at[8]
            write_and_see(500, on=[*readers, resumed])  # it has caught up with the others
            del reads[:]
            write_and_see(999, on=[*readers, resumed])
            assert len(reads) == 1, reads


@pytest.mark.anyio
async def test_a_stream_far_behind_reads_on_its_own_and_holds_nobody_back() -> None:
    batches, per_batch = 12, 100  # more than a stream may be handed and not have sent
    with postgres_schema("feed") as url, Store(url) as store:
        chat_id = store.create_chat().id
        ledger = RunLedger.of(store)
        ledger.claim("run-1", chat_id, replica=ELSEWHERE, lease=60)
        feed = ChatFeed()
        fast, slow = Follower(), Follower()
        with counting_reads(ledger) as reads:
            async with anyio.create_task_group() as streams:
                fast_seen = Collected()
                slow_seen = Collected()
                slow_may_go_on = anyio.Event()
                for follower, seen in ((fast, fast_seen), (slow, slow_seen)):
                    feed.add(follower)
                    frames = follow_events(follower, feed, ledger, chat_id, None, math.inf)
                    gate = slow_may_go_on if follower is slow else None
                    streams.start_soon(seen.collect, frames, gate)
                with anyio.fail_after(WAIT):
                    await wait_until(lambda: not (fast.behind or slow.behind))
                    first = await anyio.to_thread.run_sync(ledger.append, "run-1", chat_id, [event(0)])
                    feed.notice(first[-1].id)
                    await wait_until(lambda: slow_seen.has(1)() and fast_seen.has(1)())

                    del reads[:]
                    written = first
                    for batch in range(batches):
                        numbers = range(1 + batch * per_batch, 1 + (batch + 1) * per_batch)
                        more = [event(n) for n in numbers]
                        written += await anyio.to_thread.run_sync(ledger.append, "run-1", chat_id, more)
                        feed.notice(written[-1].id)
                        await wait_until(fast_seen.has(len(written)))
                    # One read per notice for the stream that keeps up, from its own place each time.
                    assert len(reads) == batches
                    assert slow.behind, "the stream that sent nothing dropped what it was handed"

                    slow_may_go_on.set()
                    await wait_until(slow_seen.has(len(written)))
                    feed.hand_unstored(json.dumps({"type": "done"}))
                    await wait_until(lambda: fast_seen.done and slow_seen.done)
                for follower in (fast, slow):
                    follower.close()
        everything = [json.loads(e.data)["text"] for e in written]
        assert fast_seen.texts == everything
        assert slow_seen.texts == everything
        assert fast_seen.ids == slow_seen.ids == [e.id for e in written]
        assert not fast.behind


class Collected:
    """What one stream sent: the events' texts and ids, in order."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.ids: list[int] = []
        self.done = False

    def has(self, count: int) -> Callable[[], bool]:
        return lambda: len(self.texts) >= count

    async def collect(self, frames: AsyncIterator[str], gate: anyio.Event | None) -> None:
        async for frame in frames:
            lines = dict(line.split(": ", 1) for line in frame.strip().splitlines() if ": " in line)
            if "data" not in lines:
                continue
            data: dict[str, Any] = json.loads(lines["data"])
            if data["type"] == "done":
                self.done = True
                continue
            self.texts.append(data["text"])
            self.ids.append(int(lines["id"]))
            if gate is not None:
                await gate.wait()  # a page that stopped reading: nothing more leaves until it goes on


async def wait_until(condition: Callable[[], bool]) -> None:
    """Poll `condition` on the event loop (the caller bounds it with a deadline)."""
    while not condition():  # noqa: ASYNC110 (the streams' state has no event of its own to wait on)
        await anyio.sleep(0.01)
