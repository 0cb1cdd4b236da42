"""Stopping a real `toolbridge serve` with SIGTERM mid-run (`--log-format json`, so its output is read
as JSON lines): a run that finishes within `server.shutdown_grace` is answered in full, one that does
not is interrupted with what it completed stored; either way the process exits 0."""

from __future__ import annotations

import json
import queue
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from server_helpers import ServerProcess, start_process, write_config
from users_helpers import add_user, bearer, new_key

from toolbridge.runs.ledger import RunLedger
from toolbridge.store import Store
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

WAIT = 30.0


class Gate:
    """Holds the scripted model's reply until released (the model's request is seen arriving first)."""

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.released = threading.Event()

    def __call__(self, _request: object) -> bool:
        self.arrived.set()
        return self.released.wait(WAIT)


class JsonLog:
    """The process's output, one parsed JSON object per line, read on a thread."""

    def __init__(self, running: ServerProcess) -> None:
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        assert running.process.stdout is not None
        stdout = running.process.stdout
        threading.Thread(
            target=lambda: [self.lines.put(json.loads(line)) for line in stdout], daemon=True
        ).start()

    def until(self, text: str) -> dict[str, Any]:
        while True:
            try:
                line = self.lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no log line says {text!r}; seen: {self.seen}") from None
            self.seen.append(line)
            if text in line["message"]:
                return line

    def rest(self) -> list[dict[str, Any]]:
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return self.seen


def start(tmp_path: Path, model: ScriptedModelServer, grace: float) -> tuple[ServerProcess, JsonLog, str]:
    server = {"shutdown_grace": grace, "log_format": "json"}
    db = f"sqlite:///{tmp_path / 'chats.db'}"
    running = start_process(write_config(tmp_path, model, server=server), db)
    return running, JsonLog(running), db


def test_sigterm_lets_a_run_finish_within_the_grace_period(tmp_path: Path) -> None:
    gate = Gate()
    with ScriptedModelServer([Turn.text("All done.").expecting(gate)]) as model:
        db = f"sqlite:///{tmp_path / 'chats.db'}"
        add_user(db, "ada")
        key = new_key(db, "ada")
        running, log, db = start(tmp_path, model, grace=60)
        try:
            http = running.server.http(headers=bearer(key))
            chat_id = http.post("/api/chats", json={}).json()["id"]
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "Finish this."})
            assert gate.arrived.wait(WAIT)
            running.process.send_signal(signal.SIGTERM)
            log.until("s for 1 run(s) to finish")
            gate.released.set()
            assert running.process.wait(WAIT) == 0
        finally:
            gate.released.set()
            running.stop()
    ended = next(line for line in log.rest() if "ended: final_answer" in line["message"])
    assert ended["chat_id"] == str(chat_id)
    assert ended["run_id"]
    assert ended["user"] == "ada"  # bound where the request came in, inherited by its run
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in log.seen)
    with Store(db) as store:
        assert [m.role for m in store.get_messages(chat_id)] == ["user", "assistant"]
        assert store.get_messages(chat_id)[-1].content == "All done."


def test_sigterm_interrupts_a_run_past_the_grace_period_keeping_what_it_completed(tmp_path: Path) -> None:
    gate = Gate()
    turns = [Turn.tool_calls(ToolCallSpec("no_such_tool", {})), Turn.text("Never sent.").expecting(gate)]
    with ScriptedModelServer(turns) as model:
        running, log, db = start(tmp_path, model, grace=0)
        try:
            http = running.server.http()
            chat_id = http.post("/api/chats", json={}).json()["id"]
            http.post(f"/api/chats/{chat_id}/messages", json={"content": "Call it."})
            assert gate.arrived.wait(WAIT)
            running.process.send_signal(signal.SIGTERM)
            interrupted = log.until("interrupting run")
            assert running.process.wait(WAIT) == 0
        finally:
            gate.released.set()
            running.stop()
    assert f"of chat {chat_id}" in interrupted["message"]
    assert any("ended: cancelled" in line["message"] for line in log.rest())
    with Store(db) as store:
        roles = [m.role for m in store.get_messages(chat_id)]
        (run,) = RunLedger.of(store).of_chat(chat_id)
        events = [json.loads(event.data)["type"] for event in RunLedger.of(store).events_after(chat_id, 0)]
    assert roles == ["user", "assistant", "tool"]  # the step that completed, and its call's result
    assert run.status == "interrupted"  # not cancelled: nobody asked it to stop
    assert events[-1] == "run_interrupted"
