"""Several processes on one database at once: opening (and migrating) one fresh SQLite file together,
and appending to one chat together on SQLite and on PostgreSQL, without a `database is locked` error or
two messages at one position."""

from __future__ import annotations

import logging
import multiprocessing
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from store_opener import append_to_chat, open_and_write

from toolbridge.store import Store

pytestmark = pytest.mark.slow

PROCESSES = 6
ROUNDS = 10
RESULT_TIMEOUT = 90

spawn = multiprocessing.get_context("spawn")


def run_workers(target: Any, argument_sets: list[tuple[Any, ...]], results_expected: int) -> list[Any]:
    """Start one spawned process per argument set (each gets the shared results queue last)."""
    results = spawn.Queue()
    workers = [spawn.Process(target=target, args=(*arguments, results)) for arguments in argument_sets]
    for worker in workers:
        worker.start()
    try:
        outcomes = [results.get(timeout=RESULT_TIMEOUT) for _ in range(results_expected)]
    finally:
        for worker in workers:
            worker.join(RESULT_TIMEOUT)
            if worker.is_alive():
                worker.kill()
    errors = [detail for status, detail in outcomes if status == "error"]
    assert not errors, errors[0]
    return [detail for _, detail in outcomes]


def test_processes_opening_one_fresh_sqlite_file_at_once_all_succeed(tmp_path: Path) -> None:
    urls = [f"sqlite:///{tmp_path / f'fresh-{round_number}.db'}" for round_number in range(ROUNDS)]
    barrier = spawn.Barrier(PROCESSES)
    run_workers(open_and_write, [(urls, barrier)] * PROCESSES, PROCESSES * ROUNDS)
    for url in urls:
        with Store(url) as store:
            assert len(store.list_chats()) == PROCESSES


class _Signal(logging.Handler):
    """Sets `event` when a record is logged: a thread's way of saying it got where we wait for it."""

    def __init__(self, event: threading.Event) -> None:
        super().__init__(logging.DEBUG)
        self.event = event

    def emit(self, record: logging.LogRecord) -> None:
        self.event.set()


def test_opening_a_fresh_file_waits_for_another_connections_write_lock(tmp_path: Path) -> None:
    # What two processes opening one fresh file at once do to each other, made deterministic: while
    # another connection holds the write lock, SQLite refuses the switch to WAL at once, busy timeout
    # or not. The store waits for the lock instead of failing with `database is locked`.
    path = tmp_path / "fresh.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    retrying = threading.Event()
    opened: list[object] = []
    logger = logging.getLogger("toolbridge.store")
    handler = _Signal(retrying)
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.DEBUG)

    def open_store() -> None:
        try:
            with Store(f"sqlite:///{path}") as store:
                opened.append(store.create_chat(agent="late").id)
        except Exception as error:
            opened.append(error)
        finally:
            retrying.set()  # also when it failed: then there is nothing to wait for

    thread = threading.Thread(target=open_store)
    try:
        thread.start()
        assert retrying.wait(RESULT_TIMEOUT)
        assert not opened, f"did not wait for the lock: {opened}"
        other.execute("ROLLBACK")
        thread.join(RESULT_TIMEOUT)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        other.close()
    assert opened == [1]
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def assert_appends_keep_every_message_once(url: str) -> None:
    writers, count = 4, 15
    with Store(url) as store:
        chat_id = store.create_chat(agent="writers").id
    barrier = spawn.Barrier(writers)
    positions = run_workers(
        append_to_chat, [(url, chat_id, writer, count, barrier) for writer in range(writers)], writers
    )
    assert sorted(p for written in positions for p in written) == list(range(writers * count))
    with Store(url) as store:
        stored = [message.content for message in store.get_messages(chat_id)]
    assert sorted(stored) == sorted(f"writer {w} message {n}" for w in range(writers) for n in range(count))
    for writer in range(writers):  # each writer's messages in the order it wrote them
        own = [content for content in stored if content.startswith(f"writer {writer} ")]
        assert own == [f"writer {writer} message {n}" for n in range(count)]


def test_parallel_writers_on_one_sqlite_chat(tmp_path: Path) -> None:
    assert_appends_keep_every_message_once(f"sqlite:///{tmp_path / 'writers.db'}")


def test_parallel_writers_on_one_postgres_chat(pg_url: str) -> None:
    assert_appends_keep_every_message_once(pg_url)
