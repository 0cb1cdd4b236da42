"""Where the database is, opening it with the right SQLite settings, and migrating it to the latest schema.

SQLite connections get WAL (readers never block the writer, and a killed writer leaves a database that
recovers on the next open), foreign keys, and a busy timeout. pysqlite's own transaction handling is
switched off so that SQLAlchemy's BEGIN is real: DDL in migrations is then transactional too, and
writers take the write lock up front (`BEGIN IMMEDIATE`), where the busy timeout can wait for it.

Switching a file to WAL is the one step the busy timeout does not cover: SQLite answers `database is
locked` at once when another connection holds the write lock (two processes opening one fresh file at
the same moment both try to switch it), so that step is retried until the busy timeout runs out.

Alembic (and the template engine it loads) is imported only when the schema is behind: a database at
the latest revision opens with a look at its `alembic_version` table.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs
from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from toolbridge.store._errors import SchemaDamagedError, StoreError
from toolbridge.store._schema import Base

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

__all__ = [
    "DATABASE_ENV_VAR",
    "default_database_url",
    "display_url",
    "head_revision",
    "migrate",
    "open_engine",
    "readiness_problem",
    "resolve_database_url",
]

logger = logging.getLogger("toolbridge.store")

DATABASE_ENV_VAR = "TOOLBRIDGE_DB"
BUSY_TIMEOUT_MS = 30_000
_WAL_RETRY_FIRST_DELAY = 0.005
_WAL_RETRY_MAX_DELAY = 0.1
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_VERSION_TABLE = "alembic_version"
# The execution option that tells the `begin` hook how to start a SQLite transaction.
_BEGIN_OPTION = "toolbridge_sqlite_begin"


def default_database_url() -> str:
    return f"sqlite:///{Path(platformdirs.user_data_dir('toolbridge')) / 'toolbridge.db'}"


def resolve_database_url(explicit: str | None = None, configured: str | None = None) -> str:
    """The database to use: `explicit` (`--db`), then `$TOOLBRIDGE_DB`, then `configured` (the config's
    `database`), then `toolbridge.db` in the user data dir. A value without `://` is a SQLite file path."""
    for candidate in (explicit, os.environ.get(DATABASE_ENV_VAR), configured):
        if candidate:
            return candidate if "://" in candidate else f"sqlite:///{Path(candidate).expanduser()}"
    return default_database_url()


def open_engine(url: str) -> tuple[Engine, Engine]:
    """An engine for reads and one for writes (the same pool; on SQLite writes begin IMMEDIATE)."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise StoreError(f"invalid database URL {url!r}: {exc}") from exc
    # Errors are logged and answered with their text: never the values written (a chat's words, a
    # form's answer that may be a password) that SQLAlchemy would otherwise add to it.
    hidden = {"hide_parameters": True}
    try:
        if parsed.get_backend_name() != "sqlite":
            engine = create_engine(parsed, pool_pre_ping=True, **hidden)
            return engine, engine
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000}, **hidden)
    except (ArgumentError, ImportError) as exc:
        raise StoreError(
            f"cannot use the database URL {display_url(url)}: {exc}. Check the URL's scheme, and install "
            "the driver it names (for PostgreSQL: pip install 'toolbridge[postgres]', and a postgresql+psycopg:// URL)."
        ) from exc
    except OSError as exc:
        raise StoreError(f"cannot create the directory for {display_url(url)}: {exc}") from exc
    _configure_sqlite(engine)
    return engine, engine.execution_options(**{_BEGIN_OPTION: "BEGIN IMMEDIATE"})


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # SQLAlchemy's `begin` hook below issues BEGIN
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        _switch_to_wal(cursor)
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Connection) -> None:
        connection.exec_driver_sql(connection.get_execution_options().get(_BEGIN_OPTION, "BEGIN"))


def _switch_to_wal(cursor: sqlite3.Cursor) -> None:
    """`PRAGMA journal_mode = WAL`, retried while another connection holds the lock it needs.

    SQLite does not wait here (waiting could deadlock two connections that both switch), so this waits
    for it, with a growing delay, as long as the busy timeout would have.
    """
    if cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
        return  # already switched (by us or another process): nothing to lock
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = _WAL_RETRY_FIRST_DELAY
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + delay > deadline:
                raise
            logger.debug("switching the database to WAL: %s; retrying in %.3f s", exc, delay)
        time.sleep(delay)
        delay = min(delay * 2, _WAL_RETRY_MAX_DELAY)


def _alembic_config(connection: Connection | None = None) -> AlembicConfig:
    from alembic.config import Config as AlembicConfig

    config = AlembicConfig()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The latest schema revision this toolbridge knows: the newest migration's file name.

    Migrations are numbered (`0007_model_usage_reserved.py`), one after the other, each file's revision
    its name (tests/store/test_store_migrations.py checks that alembic finds the same head)."""
    return max(path.stem for path in (MIGRATIONS / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"))


def current_revision(connection: Connection) -> str | None:
    """The schema revision the database is at (None: no schema yet), as alembic's `MigrationContext`
    reads it; more than one row (a database alembic would refuse) reads as all of them."""
    if not inspect(connection).has_table(_VERSION_TABLE):
        return None
    rows = connection.execute(text(f"SELECT version_num FROM {_VERSION_TABLE}")).scalars().all()
    return ", ".join(rows) if rows else None


def readiness_problem(reader: Engine) -> str | None:
    """Why the database cannot serve this toolbridge now (unreachable, or not at its schema revision);
    None when it can."""
    head = head_revision()
    try:
        with reader.connect() as connection:
            current = current_revision(connection)
    except SQLAlchemyError as exc:
        return f"the database is unreachable: {exc.__class__.__name__}: {str(exc).splitlines()[0]}"
    if current != head:
        return (
            f"the database is at schema revision {current or 'none'}, this toolbridge needs {head}: "
            "restart a toolbridge of this version to migrate it, or upgrade this one"
        )
    return None


def migrate(reader: Engine, writer: Engine, url: str) -> None:
    """Bring the schema up to the latest revision, in one transaction. A no-op when it is already there."""
    try:
        with reader.connect() as connection:
            current = current_revision(connection)
        if current != head_revision():
            _upgrade(writer, url)
        _check_schema(reader, url)
    except SQLAlchemyError as exc:
        raise StoreError(
            f"cannot open the database {display_url(url)}: {exc.__class__.__name__}: {exc}"
        ) from exc


def _upgrade(writer: Engine, url: str) -> None:
    from alembic import command
    from alembic.util import CommandError

    try:
        with writer.begin() as connection:
            command.upgrade(_alembic_config(connection), "head")
    except CommandError as exc:
        raise StoreError(
            f"cannot migrate the database {display_url(url)}: {exc}. It may have been written by a newer "
            "toolbridge; upgrade toolbridge or point --db / $TOOLBRIDGE_DB at another database."
        ) from exc


def _check_schema(reader: Engine, url: str) -> None:
    """Every table and column the schema needs is there: the revision says the schema is current, but
    a table dropped by hand would otherwise surface as a traceback on the first query that uses it."""
    with reader.connect() as connection:
        inspector = inspect(connection)
        present = set(inspector.get_table_names())
        for table in Base.metadata.sorted_tables:
            if table.name not in present:
                raise SchemaDamagedError(display_url(url), f"table {table.name!r} is missing")
            columns = {column["name"] for column in inspector.get_columns(table.name)}
            missing = [column.name for column in table.columns if column.name not in columns]
            if missing:
                raise SchemaDamagedError(
                    display_url(url), f"table {table.name!r} lacks columns {', '.join(missing)}"
                )


def display_url(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url
