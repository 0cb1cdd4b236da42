"""SIGKILL a process in the middle of appending messages: every message it reported committed is there,
nothing half-written is, and SQLite's integrity check passes. Three rounds on the same file."""

from __future__ import annotations

import importlib.util
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from toolbridge.store import Store

pytestmark = pytest.mark.slow

WRITER = Path(__file__).with_name("store_crash_writer.py")


def load_writer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("store_crash_writer", WRITER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kill_after_commits(db_url: str, chat_id: int, commits: int) -> int:
    """Run the writer until it has reported `commits` more appends, SIGKILL it, return the last position."""
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), db_url, str(chat_id)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None
    assert writer.stdout is not None
    last = -1
    try:
        for _ in range(commits):
            line = writer.stdout.readline()  # blocks until the writer has committed the next message
            assert line.startswith("committed "), (
                f"writer said {line!r}; stderr: {writer.stderr.read() if writer.stderr else ''}"
            )
            last = int(line.split()[1])
            writer.stdin.write("next\n")  # one append at a time: it never runs ahead of what was read
            writer.stdin.flush()
        os.kill(writer.pid, signal.SIGKILL)  # the writer is at most one append further, maybe inside it
    finally:
        writer.kill()
        writer.communicate()
    assert writer.returncode == -signal.SIGKILL
    return last


def test_killed_writer_loses_nothing_committed(tmp_path: Path) -> None:
    expected_message = load_writer().expected_message
    path = tmp_path / "crash.db"
    db_url = f"sqlite:///{path}"
    with Store(db_url) as store:
        chat_id = store.create_chat(agent="crash").id

    for round_number, commits in enumerate((17, 23, 11)):
        last_reported = kill_after_commits(db_url, chat_id, commits)

        with sqlite3.connect(path) as db:  # a fresh connection recovers from the WAL, as a restart would
            assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        with Store(db_url) as store:
            messages = store.get_messages(chat_id)
            summary = store.get_chat(chat_id)
        # Everything reported is there; at most the one append in flight at the kill made it too.
        assert last_reported + 1 <= len(messages) <= last_reported + 2, f"round {round_number}"
        assert messages == [expected_message(position) for position in range(len(messages))]
        assert summary.message_count == len(messages)
