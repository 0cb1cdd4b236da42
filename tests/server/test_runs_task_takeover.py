"""Issue 25: a tool call the server runs as a task survives the `toolbridge serve` replica running it.
Two real replicas on one PostgreSQL, a real task server (tests/servers/tasks_server.py) and a scripted
model: the replica running the task is killed with SIGKILL, the other takes the run over once its lease
runs out, follows the task to its end (it is not started again), shows its result and the run's answer
on its own event stream. When the task's server is gone too, the run ends with an error naming the task.
On SQLite (one server) the same happens when the killed server is started again.

Every wait is for an event (a stream's event, the task server's answer); the timeouts are generous for
a loaded machine and only spent on failure.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import sqlalchemy
from replicas import READY_TIMEOUT, Fleet, Replica, start_replica, start_replicas, wait_for
from server_helpers import EventReader, Gate, write_config
from users_helpers import add_user, bearer

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection
from toolbridge.runs.ledger import RunLedger
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

NO_APPROVAL = {"default": {"approval": {"tools": {"wait_for_release": "never"}}}}
LEASE = {"run_lease": 3.0}
"""Short, so a killed replica's run is taken over soon; not so short that a loaded machine misses renewals."""
TAKEN_FROM_ME = "was taken over or marked interrupted by another replica"
"""What a replica logs when it finds that another one took its run over (it stalled past its lease)."""
STREAM_TIMEOUT = 120.0
"""Seconds an event stream may stay silent: a lease must run out and the other replica's keeper notice,
on a machine busy with everything else (the streams' keep-alive comments come every 15 s)."""


def answers_tool_result(text: str) -> Callable[[RecordedRequest], bool]:
    def check(request: RecordedRequest) -> bool:
        last = request.messages[-1]
        assert last["role"] == "tool", f"the last message is not the task's result: {last!r}"
        assert text in str(last["content"]), f"the last message is not the task's result: {last!r}"
        return True

    return check


def call_task_server(url: str, tool: str, tag: str, **arguments: Any) -> str:
    """Calls `tool(tag)` on the task server itself (not through a replica): `release` ends the task
    `wait_for_release(tag)`, `was_cancelled` says whether it was cancelled, `was_followed` whether a
    client polls it."""

    async def call() -> str:
        config = ServerConfig(name="direct", transport="streamable-http", url=url, timeout=180)
        async with ServerConnection(config) as server:
            result = await server.call_tool(tool, {"tag": tag, **arguments}, call_id=f"test_{tool}")
        return result.text

    return anyio.run(call)


@dataclass
class TaskRun:
    """A run on replica `a` waiting for its `wait_for_release(tag)` task, watched from replica `b`."""

    tasks: Any
    fleet: Fleet
    a: Replica
    b: Replica
    on_b: httpx.Client
    chat: int
    run: str
    stream_b: EventReader
    started: dict[str, Any]
    """Its `task_started` event, as `b` saw it."""


StartTaskRun = Callable[..., TaskRun]


@pytest.fixture
def task_run(tmp_path: Path, http_server: Callable[..., Any]) -> Iterator[StartTaskRun]:
    """`task_run(tag, *then)`: two replicas, a run on `a` whose model calls `wait_for_release(tag)` (a
    task) and then answers with the `then` turns, returned once `b` saw the task start."""
    tasks = http_server("tasks_server", "streamable-http")
    with ExitStack() as stack:

        def start(tag: str, *then: Turn) -> TaskRun:
            call_id = f"call_{tag}"
            turns = [Turn.tool_calls(ToolCallSpec("wait_for_release", {"tag": tag}, id=call_id)), *then]
            model = stack.enter_context(ScriptedModelServer(turns))
            servers = {"tasks": {"url": tasks.url, "timeout": 600}}
            fleet = stack.enter_context(
                start_replicas(
                    tmp_path, model, count=2, agents=NO_APPROVAL, server=LEASE, mcp_servers=servers
                )
            )
            a, b = fleet
            on_a, on_b = a.http(timeout=STREAM_TIMEOUT), b.http(timeout=STREAM_TIMEOUT)
            chat = on_a.post("/api/chats", json={}).json()["id"]
            stream_b = stack.enter_context(EventReader(on_b, chat))
            run = on_a.post(f"/api/chats/{chat}/messages", json={"content": "Run the job"}).json()["run_id"]
            started = stream_b.until("task_started")[-1]
            assert (started["run_id"], started["server"], started["call_id"]) == (run, "tasks", call_id)
            return TaskRun(tasks, fleet, a, b, on_b, chat, run, stream_b, started)

        yield start


def test_a_task_whose_replica_is_killed_is_followed_by_another_replica_and_the_run_answers(
    task_run: StartTaskRun,
) -> None:
    job = task_run("kill", Turn.text("The job is done.", expect=answers_tool_result("released kill")))
    job.a.kill()
    resumed = job.stream_b.until("run_resumed")[-1]
    assert (resumed["run_id"], resumed["task_ids"]) == (job.run, [job.started["task_id"]])
    # The task ends only now, after its first follower died: its result can only come through b.
    assert call_task_server(job.tasks.url, "release", "kill") == "released kill; started 1 time(s)"
    seen = job.stream_b.until("final")

    finished = next(event for event in seen if event["type"] == "tool_call_finished")
    assert (finished["call_id"], finished["is_error"]) == ("call_kill", False)
    assert finished["result_preview"] == "released kill"
    assert seen[-1]["result"]["output"] == "The job is done."
    assert seen[-1]["result"]["stop_reason"] == "final_answer"
    with job.fleet.store() as store:
        (record,) = RunLedger.of(store).of_chat(job.chat)
        assert (record.id, record.status) == (job.run, "completed")
        assert f":{job.b.pid}:" in record.replica  # b finished it
        kept = store.get_messages(job.chat)
    assert [m.role for m in kept] == ["user", "assistant", "tool", "assistant"]
    assert kept[2].result.text == "released kill"  # type: ignore[union-attr]
    assert kept[3].content == "The job is done."  # type: ignore[union-attr]


def test_a_taken_over_run_charges_its_users_tokens_on_the_replica_that_finishes_it(
    tmp_path: Path, http_server: Callable[..., Any]
) -> None:
    tasks = http_server("tasks_server", "streamable-http")
    turns = [
        Turn.tool_calls(ToolCallSpec("wait_for_release", {"tag": "paid"}, id="call_paid")).with_usage(10, 5),
        Turn.text("Done.", expect=answers_tool_result("released paid")).with_usage(100, 20),
    ]
    servers = {"tasks": {"url": tasks.url, "timeout": 600}}
    with (
        ScriptedModelServer(turns) as model,
        start_replicas(
            tmp_path, model, count=2, agents=NO_APPROVAL, server=LEASE, mcp_servers=servers
        ) as fleet,
    ):
        key = add_user(fleet.db_url, "alice")
        a, b = fleet
        on_a = a.http(timeout=STREAM_TIMEOUT, headers=bearer(key))
        on_b = b.http(timeout=STREAM_TIMEOUT, headers=bearer(key))
        chat = on_a.post("/api/chats", json={}).json()["id"]
        with EventReader(on_b, chat) as stream_b:
            on_a.post(f"/api/chats/{chat}/messages", json={"content": "Run the paid job"}).raise_for_status()
            stream_b.until("task_started")
            a.kill()
            stream_b.until("run_resumed")
            call_task_server(tasks.url, "release", "paid")
            assert stream_b.until("final")[-1]["result"]["output"] == "Done."
        with fleet.store() as store:
            used = store.users.usage(store.users.user_id("alice"))
    # The first request was charged on a, the second on b, which took the run over.
    assert (used.input_tokens, used.output_tokens) == (110, 25)


def test_a_taken_over_run_whose_task_server_is_gone_too_ends_with_an_error_naming_the_task(
    task_run: StartTaskRun,
) -> None:
    job = task_run("lost")
    job.tasks.process.kill()
    job.tasks.process.wait()
    job.a.kill()
    seen = job.stream_b.until("run_error")

    assert [e["type"] for e in seen if e["type"] in {"run_resumed", "run_interrupted"}] == ["run_resumed"]
    finished = next(event for event in seen if event["type"] == "tool_call_finished")
    assert (finished["call_id"], finished["error_kind"]) == ("call_lost", "server_unavailable")
    error = seen[-1]["message"]
    assert job.started["task_id"] in error
    assert "'wait_for_release'" in error
    assert "'tasks'" in error
    assert "the task's result is lost" in error
    with job.fleet.store() as store:
        (record,) = RunLedger.of(store).of_chat(job.chat)
        assert (record.id, record.status) == (job.run, "failed")
        kept = store.get_messages(job.chat)
    assert [m.role for m in kept] == ["user", "assistant", "tool"]  # well-formed for the next run
    assert kept[2].result.is_error  # type: ignore[union-attr]


def test_a_taken_over_run_stopped_while_its_task_is_followed_cancels_the_task_at_its_server(
    task_run: StartTaskRun,
) -> None:
    job = task_run("stopped")
    job.a.kill()
    job.stream_b.until("run_resumed")
    progress = job.stream_b.until("tool_call_progress")[-1]  # b follows the task now
    assert (progress["call_id"], progress["message"]) == ("call_stopped", "waiting for stopped")
    assert job.on_b.post(f"/api/chats/{job.chat}/cancel").status_code == 204
    seen = job.stream_b.until("final")

    finished = next(event for event in seen if event["type"] == "tool_call_finished")
    assert (finished["call_id"], finished["error_kind"]) == ("call_stopped", "cancelled")
    assert seen[-1]["result"]["stop_reason"] == "cancelled"
    assert call_task_server(job.tasks.url, "was_cancelled", "stopped") == "true"
    with job.fleet.store() as store:
        (record,) = RunLedger.of(store).of_chat(job.chat)
        assert (record.id, record.status) == (job.run, "cancelled")


def stop_holding_no_run(replica: Replica, db_url: str) -> None:
    """SIGSTOP `replica` at a moment it holds no lock on the runs (it renews and writes events in short
    transactions): stopped inside one, it would keep its run's row locked, and the other replicas pass
    a locked run by until its owner wakes up."""
    engine = sqlalchemy.create_engine(db_url)
    held = sqlalchemy.text(
        "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relname = 'runs' AND n.nspname = current_schema() AND l.pid <> pg_backend_pid()"
    )
    try:
        while True:  # bounded by the test's timeout; a transaction of the other replica ends by itself
            os.kill(replica.pid, signal.SIGSTOP)
            with engine.connect() as connection:
                if connection.execute(held).scalar() == 0:
                    return
            os.kill(replica.pid, signal.SIGCONT)
    finally:
        engine.dispose()


def test_a_replica_that_stalled_while_its_run_was_taken_over_leaves_the_task_and_the_run_to_the_other(
    task_run: StartTaskRun,
) -> None:
    """d234669: a stalled replica (SIGSTOP: alive, but renewing nothing) whose run another replica took
    over wakes up, sees it lost the run and stops following the task without cancelling it at its
    server, writing nothing more of the run; the other replica finishes it with the task's result."""
    job = task_run(
        "stall", Turn.text("Done despite the stall.", expect=answers_tool_result("released stall"))
    )
    stop_holding_no_run(job.a, job.fleet.db_url)
    try:
        resumed = job.stream_b.until("run_resumed")[-1]
        assert resumed["task_ids"] == [job.started["task_id"]]
    finally:
        os.kill(job.a.pid, signal.SIGCONT)
    wait_for(lambda: TAKEN_FROM_ME in job.a.stderr(), "the stalled replica to notice it lost the run")
    job.a.stop()  # its run's stopping is over: whatever it did to the task is done
    assert call_task_server(job.tasks.url, "release", "stall") == "released stall; started 1 time(s)"
    seen = job.stream_b.until("final")

    assert seen[-1]["result"]["output"] == "Done despite the stall."
    assert [e["type"] for e in seen if e["type"] in {"run_interrupted", "run_error"}] == []
    with job.fleet.store() as store:
        (record,) = RunLedger.of(store).of_chat(job.chat)
        assert (record.status, f":{job.b.pid}:" in record.replica) == ("completed", True)
        kept = store.get_messages(job.chat)
    assert [m.role for m in kept] == ["user", "assistant", "tool", "assistant"]
    assert kept[2].result.text == "released stall"  # type: ignore[union-attr]


@contextmanager
def messages_held(db_url: str) -> Iterator[None]:
    """No message can be stored in the database at `db_url` while inside (the table is locked)."""
    engine = sqlalchemy.create_engine(db_url)
    try:
        with engine.begin() as connection:
            connection.execute(sqlalchemy.text("LOCK TABLE messages IN SHARE MODE"))
            yield
    finally:
        engine.dispose()


def test_a_tasks_start_is_stored_after_the_message_asking_for_its_call(
    tmp_path: Path, http_server: Callable[..., Any]
) -> None:
    """The tool runs, and its server makes the task, while the assistant message asking for it is still
    being stored: were `task_started` stored first, a replica dying then would leave a run another
    takes over without the call in its chat (it used to ask the model again without the task's result)."""
    tasks = http_server("tasks_server", "streamable-http")
    gate = Gate(timeout=STREAM_TIMEOUT)
    turns = [
        Turn.tool_calls(ToolCallSpec("wait_for_release", {"tag": "order"}, id="call_order"), expect=gate),
        Turn.text("Done."),
    ]
    servers = {"tasks": {"url": tasks.url, "timeout": 600}}
    with (
        ScriptedModelServer(turns) as model,
        start_replicas(tmp_path, model, count=1, agents=NO_APPROVAL, mcp_servers=servers) as fleet,
    ):
        (a,) = fleet
        on_a = a.http(timeout=STREAM_TIMEOUT)
        chat = on_a.post("/api/chats", json={}).json()["id"]
        with EventReader(on_a, chat) as stream:
            on_a.post(f"/api/chats/{chat}/messages", json={"content": "Run the job"})
            assert gate.arrived.wait(STREAM_TIMEOUT)
            with messages_held(fleet.db_url):  # the model's answer cannot be stored yet
                gate.released.set()
                assert call_task_server(tasks.url, "was_followed", "order") == "true"
            assert call_task_server(tasks.url, "release", "order").startswith("released")
            stream.until("final")
        with fleet.store() as store:
            events = [json.loads(e.data) for e in RunLedger.of(store).events_after(chat, 0)]
    kinds = [
        "assistant" if e["type"] == "message_added" and e["message"]["role"] == "assistant" else e["type"]
        for e in events
    ]
    assert kinds.index("assistant") < kinds.index("task_started"), kinds


def test_on_sqlite_a_server_restarted_after_a_kill_follows_the_task_its_run_waited_for(
    tmp_path: Path, http_server: Callable[..., Any]
) -> None:
    tasks = http_server("tasks_server", "streamable-http")
    turns = [
        Turn.tool_calls(ToolCallSpec("wait_for_release", {"tag": "restart"}, id="call_restart")),
        Turn.text("Done after the restart.", expect=answers_tool_result("released restart")),
    ]
    db_url = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    with ScriptedModelServer(turns) as model:
        config = write_config(
            tmp_path, model, agents=NO_APPROVAL, mcp_servers={"tasks": {"url": tasks.url, "timeout": 600}}
        )
        first = start_replica("a", config, db_url, tmp_path)
        try:
            first.wait_ready(time.monotonic() + READY_TIMEOUT)
            on_first = first.http(timeout=STREAM_TIMEOUT)
            chat = on_first.post("/api/chats", json={}).json()["id"]
            with EventReader(on_first, chat) as stream:
                on_first.post(f"/api/chats/{chat}/messages", json={"content": "Run the job"})
                stream.until("task_started")
                first.kill()
        finally:
            first.close()
        again = start_replica("b", config, db_url, tmp_path)
        try:
            again.wait_ready(time.monotonic() + READY_TIMEOUT)
            with EventReader(again.http(timeout=STREAM_TIMEOUT), chat) as stream:  # replays the run
                stream.until("run_resumed")
                assert call_task_server(tasks.url, "release", "restart").startswith("released")
                seen = stream.until("final")
        finally:
            again.close()
    finished = next(event for event in seen if event["type"] == "tool_call_finished")
    assert finished["result_preview"] == "released restart"
    assert seen[-1]["result"]["output"] == "Done after the restart."
