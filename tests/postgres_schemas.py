"""Schemas of their own in the PostgreSQL test database, so that tests running side by side never see
each other's rows. Importable from any test module."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import Engine, create_engine, text

from toolbridge.store import Store

POSTGRES_URL = os.environ.get(
    "TOOLBRIDGE_TEST_POSTGRES", "postgresql+psycopg://toolbridge:toolbridge@127.0.0.1:5432/toolbridge_test"
)


def create_schema(prefix: str) -> str:
    """A new, empty schema `<prefix>_<random>`; its name. Fails the test, saying what to do, when there
    is no PostgreSQL test database."""
    schema = f"{prefix}_{secrets.token_hex(4)}"
    on_the_test_database(f"CREATE SCHEMA {schema}")
    return schema


def on_the_test_database(*statements: str) -> None:
    """Run `statements` in one transaction on the test database; fails the test, saying what to do, when
    there is none."""
    engine = create_engine(POSTGRES_URL)
    try:
        with engine.begin() as connection:
            for statement in statements:
                connection.execute(text(statement))
    except Exception as error:  # any driver error means the same thing here
        pytest.fail(
            f"No PostgreSQL test database at {POSTGRES_URL} ({type(error).__name__}: {error}). "
            "Run scripts/install-test-servers (as root it sets one up), or set TOOLBRIDGE_TEST_POSTGRES."
        )
    finally:
        engine.dispose()


def schema_url(schema: str, *settings: str) -> str:
    """The test database's URL with `schema` as the search path, and more `-c` `settings` ("name=value")."""
    options = "%20".join(
        f"-c{setting.replace('=', '%3D')}" for setting in (f"search_path={schema}", *settings)
    )
    return f"{POSTGRES_URL}{'&' if '?' in POSTGRES_URL else '?'}options={options}"


def drop_schema(*schemas: str) -> None:
    engine = create_engine(POSTGRES_URL)
    with engine.begin() as connection:
        for schema in schemas:
            connection.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
    engine.dispose()


@contextmanager
def postgres_schema(prefix: str) -> Iterator[str]:
    """A fresh schema, migrated (once, here, so that replicas starting together do not race to create
    the same tables), as a URL; dropped afterwards."""
    schema = create_schema(prefix)
    try:
        url = schema_url(schema)
        Store(url).close()
        yield url
    finally:
        drop_schema(schema)


def blocked_by(watcher: Engine, pid: int) -> bool:
    """Whether a database session waits for a lock the session `pid` holds."""
    query = "SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"
    with watcher.connect() as connection:
        return bool(connection.execute(text(query), {"pid": pid}).scalar())
