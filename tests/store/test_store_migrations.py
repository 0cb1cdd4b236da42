"""Opening a store migrates it; the migrated schema is exactly the models'; SQLite is set up for crashes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text
from store_helpers import migrate_from_first_schema, migrate_log_of_the_third_schema

from toolbridge.store import Store, StoreError, resolve_database_url
from toolbridge.store._engine import _alembic_config, head_revision
from toolbridge.store._schema import Base
from toolbridge.types import UserMessage


def test_a_fresh_file_is_migrated_to_head(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "fresh.db"
    Store(f"sqlite:///{path}").close()
    with sqlite3.connect(path) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        (version,) = db.execute("SELECT version_num FROM alembic_version").fetchone()
    assert {"agents", "chats", "messages", "tool_calls", "users", "api_keys", "alembic_version"} <= tables
    assert version == head_revision() == "0009_chat_models"


def test_the_head_revision_read_from_the_file_names_is_alembics() -> None:
    assert head_revision() == ScriptDirectory.from_config(_alembic_config()).get_current_head()


def test_opening_a_current_database_loads_neither_alembic_nor_the_agent(db_url: str) -> None:
    Store(db_url).close()  # migrated here: the probe below opens a database at head
    probe = (
        "import sys\n"
        "from toolbridge.store import Store\n"
        f"with Store({db_url!r}) as store:\n"
        "    store.list_chats()\n"
        "heavy = ['alembic', 'mako', 'mcp', 'toolbridge.agent', 'toolbridge.tools', 'toolbridge.models']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_reopening_keeps_data_and_changes_nothing(db_url: str, tmp_path: Path) -> None:
    with Store(db_url) as store:
        chat = store.create_chat()
        store.append_message(chat.id, UserMessage(content="still here?"))
    schema_before = _schema(tmp_path / "toolbridge.db")
    for _ in range(2):
        with Store(db_url) as store:
            assert store.get_messages(chat.id) == [UserMessage(content="still here?")]
    assert _schema(tmp_path / "toolbridge.db") == schema_before


def test_migrated_schema_equals_the_models(db_url: str) -> None:
    Store(db_url).close()
    engine = create_engine(db_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
    engine.dispose()


def test_sqlite_runs_in_wal_mode_with_foreign_keys(store: Store, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "toolbridge.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent in the file
    with store._reader.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000


def test_two_stores_opening_one_fresh_file_at_once_both_work(db_url: str) -> None:
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def open_it() -> None:
        start.wait()
        try:
            Store(db_url).close()
        except BaseException as exc:  # reported below, with the thread's error
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_a_database_from_a_newer_toolbridge_is_refused_with_advice(db_url: str, tmp_path: Path) -> None:
    Store(db_url).close()
    with sqlite3.connect(tmp_path / "toolbridge.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '9999_from_the_future'")
    with pytest.raises(StoreError, match="newer toolbridge"):
        Store(db_url)


def test_an_unusable_url_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="invalid database URL"):
        Store("not a url://")


def test_database_url_order(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TOOLBRIDGE_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert resolve_database_url() == f"sqlite:///{tmp_path / 'data' / 'toolbridge' / 'toolbridge.db'}"
    assert resolve_database_url(None, "postgresql://u@h/db") == "postgresql://u@h/db"
    monkeypatch.setenv("TOOLBRIDGE_DB", "sqlite:///env.db")
    assert resolve_database_url(None, "postgresql://u@h/db") == "sqlite:///env.db"
    assert resolve_database_url("explicit.db") == f"sqlite:///{Path('explicit.db')}"


def _schema(path: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()


def test_timeouts_and_declined_calls_of_the_first_schema_get_their_error_kind(db_url: str) -> None:
    migrate_from_first_schema(db_url)


def test_messages_of_the_second_schema_read_back_after_attachments_were_added(db_url: str) -> None:
    engine = create_engine(db_url)
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0002_tool_call_error_kind")
        at = datetime(2025, 1, 1, tzinfo=UTC).replace(tzinfo=None)
        connection.execute(
            text("INSERT INTO chats (id, created_at, updated_at) VALUES (1, :at, :at)"), {"at": at}
        )
        connection.execute(
            text(
                "INSERT INTO messages (chat_id, position, role, content, reasoning, created_at) "
                "VALUES (1, 0, 'user', 'an old question', '', :at)"
            ),
            {"at": at},
        )
    engine.dispose()
    with Store(db_url) as store:
        assert store.get_messages(1) == [UserMessage(content="an old question")]
        attached = UserMessage(
            content="and this file?",
            attachments=[
                {"type": "resource", "uri": "file:///a.txt", "mime_type": "text/plain", "text": "hi"}
            ],
        )
        store.append_message(1, attached)
        assert store.get_messages(1)[1] == attached


def test_calls_logged_before_callers_were_kept_count_as_the_agents(db_url: str) -> None:
    migrate_log_of_the_third_schema(db_url)


def test_chats_and_messages_of_the_fourth_schema_survive_adding_users(db_url: str) -> None:
    """Adding `chats.user_id` must not rebuild `chats` on SQLite: dropping the old table would cascade
    to every message."""
    engine = create_engine(db_url)
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0004_tool_call_caller")
        at = datetime(2025, 1, 1, tzinfo=UTC).replace(tzinfo=None)
        connection.execute(
            text("INSERT INTO chats (id, created_at, updated_at) VALUES (1, :at, :at)"), {"at": at}
        )
        connection.execute(
            text(
                "INSERT INTO messages (chat_id, position, role, content, reasoning, created_at) "
                "VALUES (1, 0, 'user', 'kept', '', :at)"
            ),
            {"at": at},
        )
    engine.dispose()
    with Store(db_url) as store:
        assert store.get_messages(1) == [UserMessage(content="kept")]
        assert store.get_chat(1).user_id is None
