"""Stores on real SQLite files in the test's tmp_path; `pg_url`, the PostgreSQL test database emptied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from postgres_schemas import POSTGRES_URL, on_the_test_database
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
    on_the_test_database("DROP SCHEMA public CASCADE", "CREATE SCHEMA public")
    return POSTGRES_URL
