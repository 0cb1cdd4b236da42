"""Stores on real SQLite files in the test's tmp_path; `pg_url`, a fresh schema of the PostgreSQL test
database (a schema each, so tests running side by side never see each other's rows)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from postgres_schemas import create_schema, drop_schema, schema_url
from toolbridge.store import Store


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'toolbridge.db'}"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as opened:
        yield opened


@pytest.fixture
def pg_url() -> Iterator[str]:
    """The test database with a fresh, empty schema of this test's own as its search path."""
    schema = create_schema("store")
    try:
        yield schema_url(schema)
    finally:
        drop_schema(schema)
