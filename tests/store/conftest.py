"""Stores on real SQLite files in the test's tmp_path; `pg_url`, the PostgreSQL test database emptied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from postgres_schemas import POSTGRES_URL
from toolbridge.store import Store


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'toolbridge.db'}"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as opened:
        yield opened


@pytest.fixture
def pg_url() -> str:
    """The test database, emptied: a fresh schema for each test."""
    engine = create_engine(POSTGRES_URL)
    try:
        with engine.begin() as connection:
            connection.execute(text("DROP SCHEMA public CASCADE"))
            connection.execute(text("CREATE SCHEMA public"))
    except Exception as error:  # any driver error means the same thing here
        pytest.fail(
            f"No PostgreSQL test database at {POSTGRES_URL} ({type(error).__name__}: {error}). "
            "Run scripts/install-test-servers (as root it sets one up), or set TOOLBRIDGE_TEST_POSTGRES."
        )
    finally:
        engine.dispose()
    return POSTGRES_URL
