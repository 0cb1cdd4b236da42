"""The moment between a run's end and its owner's last step: the end is committed (another replica's page
may already show the final event) while the owner is still writing it. Then the run cannot be cancelled
(404), and the next run of the chat starts on the owner too, instead of a 409 for a run that is over.

The window is held open by a transaction of the test's that keeps the run's row share-locked, so the
owner's `end` waits for it; two whole servers (threads) share one PostgreSQL schema.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from replicas import postgres_schema
from server_helpers import EventReader, Gate, serve_in_thread
from sqlalchemy import create_engine, text

from postgres_schemas import POSTGRES_URL
from toolbridge.testing import ScriptedModel, Turn

WAIT = 20.0


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)  # polling a condition, bounded by the deadline


def test_a_run_being_ended_is_not_cancelled_and_the_next_run_waits_for_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="toolbridge.server._chats")
    gate = Gate(WAIT)
    turns = [Turn.text("First.").expecting(gate), Turn.text("Second.")]
    with ScriptedModel(turns) as model, postgres_schema("runs") as url, ExitStack() as stack:
        stack.callback(gate.released.set)  # before the model stops
        servers = []
        for name in "ab":
            (tmp_path / name).mkdir()
            servers.append(stack.enter_context(serve_in_thread(tmp_path / name, model, db_url=url)))
        a, b = servers
        on_a, on_b = a.http(), b.http()
        chat_id = on_a.post("/api/chats", json={}).json()["id"]
        engine, watcher = create_engine(url), create_engine(POSTGRES_URL)
        stack.callback(engine.dispose)
        stack.callback(watcher.dispose)

        def blocked_by(pid: int) -> bool:
            query = "SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"
            with watcher.connect() as connection:
                return bool(connection.execute(text(query), {"pid": pid}).scalar())

        with EventReader(on_b, chat_id) as stream_b:
            first = on_a.post(f"/api/chats/{chat_id}/messages", json={"content": "1?"}).json()["run_id"]
            assert gate.arrived.wait(WAIT)
            next_run: list[httpx.Response] = []
            with engine.connect() as holding, holding.begin():
                holding.execute(text("SELECT id FROM runs WHERE id = :id FOR SHARE"), {"id": first})
                pid = holding.execute(text("SELECT pg_backend_pid()")).scalar_one()
                gate.released.set()
                wait_for(lambda: blocked_by(pid), "the owner's end to wait for the test's lock")

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
