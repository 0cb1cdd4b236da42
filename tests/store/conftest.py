"""Stores on real SQLite files in the test's tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from toolbridge.store import Store


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'toolbridge.db'}"


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url) as opened:
        yield opened
