"""The loader's tests see no config of the real machine (`isolated`, used by test_loader*.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolbridge.config import loader


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No config from the real machine leaks in: empty cwd, no $TOOLBRIDGE_CONFIG, a fake user dir."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("TOOLBRIDGE_CONFIG", raising=False)
    user_dir = tmp_path / "user-config"
    monkeypatch.setattr(loader.platformdirs, "user_config_dir", lambda appname: str(user_dir / appname))
    return tmp_path
