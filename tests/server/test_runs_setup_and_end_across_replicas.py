"""The edges of a run on its owner while other replicas act on it, each window held open by a transaction
of the test's that keeps a row locked; two whole servers (threads) share one PostgreSQL schema.

- Set-up: the run is claimed (others see it and may cancel it) but its agent has not started yet. A cancel
  then stops it as soon as it starts, instead of being dropped.
- End: the end is committed (another replica's page may already show the final event) while the owner is
  still writing it. The run cannot be cancelled then (404), and the chat's next run starts on the owner
  too, instead of a 409 for a run that is over.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from replicas import CAREFUL, postgres_schema, wait_for
from server_helpers import EventReader, Gate, RunningServer, serve_in_thread
from sqlalchemy import Connection, Engine, create_engine, text

from postgres_schemas import POSTGRES_URL, blocked_by
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

WAIT = 20.0


def two_servers(
    tmp_path: Path, model: ScriptedModelServer, url: str, stack: ExitStack
) -> list[RunningServer]:
    servers = []
    for name in "ab":
        (tmp_path / name).mkdir()
        servers.append(stack.enter_context(serve_in_thread(tmp_path / name, model, db_url=url)))
    return servers


def post_held_up_by(
    holding: Connection, watcher: Engine, post: Callable[[], httpx.Response], waiting_for: str
) -> tuple[threading.Thread, list[httpx.Response]]:
    """Send `post` on a thread of its own; return once the server waits for a lock `holding` keeps. Its
    answer lands in the list once the thread ends."""
    pid = holding.execute(text("SELECT pg_backend_pid()")).scalar_one()
    answers: list[httpx.Response] = []
    thread = threading.Thread(target=lambda: answers.append(post()))
    thread.start()
    wait_for(lambda: blocked_by(watcher, pid), waiting_for)
    return thread, answers


def test_a_run_cancelled_from_another_replica_while_it_is_set_up_stops_as_it_starts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="toolbridge.runs.channels")  # where signals reach a run
    with ScriptedModelServer([]) as model, postgres_schema("runs") as url, ExitStack() as stack:
        a, b = two_servers(tmp_path, model, url, stack)
        on_a, on_b = a.http(), b.http()
        chat_id = on_a.post("/api/chats", json={}).json()["id"]
        engine, watcher = create_engine(url), create_engine(POSTGRES_URL)
        stack.callback(engine.dispose)
        stack.callback(watcher.dispose)
        with EventReader(on_b, chat_id) as stream_b:
            with engine.connect() as holding, holding.begin():
                # The run's claim only needs the chat's key; storing the user's message waits for this.
                holding.execute(
                    text("SELECT id FROM chats WHERE id = :id FOR NO KEY UPDATE"), {"id": chat_id}
                )
                starter, started = post_held_up_by(
                    holding,
                    watcher,
                    lambda: on_a.post(f"/api/chats/{chat_id}/messages", json={"content": "Hi"}),
                    "the owner to be setting the run up",
                )

                cancelled_on_b = on_b.post(f"/api/chats/{chat_id}/cancel")
                wait_for(
                    lambda: "cancelled from another replica" in caplog.text, "the owner to take the cancel"
                )
                cancelled_on_a = on_a.post(f"/api/chats/{chat_id}/cancel")
            starter.join(WAIT)
            assert cancelled_on_b.status_code == cancelled_on_a.status_code == 204
            assert started[0].status_code == 202, started[0].text
            events = stream_b.until("final")

    assert events[0] == {"type": "run_started", "run_id": started[0].json()["run_id"], "model": "scripted"}
    assert events[-1]["result"]["stop_reason"] == "cancelled"  # the model was never asked


def test_a_run_being_ended_is_not_cancelled_and_the_next_run_waits_for_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolbridge.server.web.chats")
    gate = Gate(WAIT)
    turns = [Turn.text("First.").expecting(gate), Turn.text("Second.")]
    with ScriptedModelServer(turns) as model, postgres_schema("runs") as url, ExitStack() as stack:
        stack.callback(gate.released.set)  # before the model stops
        a, b = two_servers(tmp_path, model, url, stack)
        on_a, on_b = a.http(), b.http()
        chat_id = on_a.post("/api/chats", json={}).json()["id"]
        engine, watcher = create_engine(url), create_engine(POSTGRES_URL)
        stack.callback(engine.dispose)
        stack.callback(watcher.dispose)

        with EventReader(on_b, chat_id) as stream_b:
            first = on_a.post(f"/api/chats/{chat_id}/messages", json={"content": "1?"}).json()["run_id"]
            assert gate.arrived.wait(WAIT)
            next_run: list[httpx.Response] = []
            with engine.connect() as holding, holding.begin():
                holding.execute(text("SELECT id FROM runs WHERE id = :id FOR SHARE"), {"id": first})
                pid = holding.execute(text("SELECT pg_backend_pid()")).scalar_one()
                gate.released.set()
                wait_for(lambda: blocked_by(watcher, pid), "the owner's end to wait for the test's lock")

                cancelled = on_a.post(f"/api/chats/{chat_id}/cancel")
                starter = threading.Thread(
                    target=lambda: next_run.append(
                        on_a.post(f"/api/chats/{chat_id}/messages", json={"content": "2?"})
                    )
                )
                starter.start()
                wait_for(
                    lambda: next_run or "the next run waits" in caplog.text,
                    "the next run's start to answer or wait",
                )
            starter.join(WAIT)
            assert cancelled.status_code == 404, cancelled.text
            assert next_run[0].status_code == 202, next_run[0].text
            events = stream_b.until("final") + stream_b.until("final")

    second = next_run[0].json()["run_id"]
    started = [e["run_id"] for e in events if e["type"] == "run_started"]
    assert started == [first, second]
    answers = [e["result"]["output"] for e in events if e["type"] == "final"]
    assert answers == ["First.", "Second."]


def test_a_run_whose_claim_is_slow_is_not_taken_for_one_another_replica_reaped(tmp_path: Path) -> None:
    """Leases renewed while a run's claim waits (its row not yet in the database) must not count it among
    the runs this replica lost: it would be cancelled as it starts."""
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "1 + 1"}, id="call_parked")),
        Turn.text("Claimed late, answered all the same."),
        Turn.text("Not calculated."),
    ]
    with ScriptedModelServer(turns) as model, postgres_schema("runs") as url, ExitStack() as stack:
        server = stack.enter_context(
            serve_in_thread(tmp_path, model, db_url=url, agents=CAREFUL, server={"run_lease": 1.5})
        )
        client = server.http()
        parked_chat, slow_chat = (client.post("/api/chats", json={}).json()["id"] for _ in range(2))
        engine, watcher = create_engine(url), create_engine(POSTGRES_URL)
        stack.callback(engine.dispose)
        stack.callback(watcher.dispose)
        # A run that holds a lease while the other is claimed: its renewals show the keeper at work.
        with EventReader(client, parked_chat) as parked:
            client.post(f"/api/chats/{parked_chat}/messages", json={"content": "1 + 1?"}).raise_for_status()
            parked.until("approval_requested")
            with EventReader(client, slow_chat) as slow, engine.connect() as holding, holding.begin():
                # The claim inserts a run of this chat: it waits while the chat's row is locked.
                holding.execute(text("SELECT id FROM chats WHERE id = :id FOR UPDATE"), {"id": slow_chat})
                starter, started = post_held_up_by(
                    holding,
                    watcher,
                    lambda: client.post(f"/api/chats/{slow_chat}/messages", json={"content": "Hi"}),
                    "the claim to wait for the chat's row",
                )
                first = lease_until(engine, parked_chat)
                second = _next_lease(engine, parked_chat, after=first)
                _next_lease(engine, parked_chat, after=second)  # two renewals while the claim waits
                holding.commit()
                starter.join(WAIT)
                assert started[0].status_code == 202, started[0].text
                final = slow.until("final")[-1]
                assert final["result"]["stop_reason"] != "cancelled", final
                assert final["result"]["output"] == "Claimed late, answered all the same."
            client.post(f"/api/chats/{parked_chat}/approvals/call_parked", json={"approved": False})
            # The parked run ends on its own before the server stops (stopping would interrupt it).
            assert parked.until("final")[-1]["result"]["output"] == "Not calculated."


def _next_lease(engine: Engine, chat_id: int, *, after: object) -> object:
    """The chat's run's lease once the owner has renewed it past `after`."""
    wait_for(lambda: lease_until(engine, chat_id) > after, "a lease renewal")  # type: ignore[operator]
    return lease_until(engine, chat_id)


def lease_until(engine: Engine, chat_id: int) -> object:
    """When the lease of the chat's running run ends (the owner pushes it on at each renewal)."""
    query = "SELECT lease_until FROM runs WHERE chat_id = :chat AND status = 'running'"
    with engine.connect() as connection:
        return connection.execute(text(query), {"chat": chat_id}).scalar_one()
