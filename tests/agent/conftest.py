"""Fixtures for the agent tests; the helpers they share are in `agent_helpers.py`."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def tool_mode_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the 'this endpoint rejects tools' memory out of the user's cache."""
    monkeypatch.setenv("TOOLBRIDGE_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"
