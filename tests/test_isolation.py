"""No test can reach the user's own config, database or caches: conftest moves HOME, the XDG dirs and
the working directory into a temporary directory and unsets every `TOOLBRIDGE_*` variable."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolbridge.cli._history_setting import settings_file
from toolbridge.config.loader import find_config_file
from toolbridge.mcp.oauth import default_token_file
from toolbridge.models.provider_keys import provider_keys_file
from toolbridge.models.tool_modes import cache_dir
from toolbridge.store import default_database_url


def test_the_default_places_are_inside_the_temporary_home(away_from_the_user: Path, real_home: Path) -> None:
    assert Path.home() == away_from_the_user != real_home
    assert Path.cwd().is_relative_to(away_from_the_user.parent)
    assert not [name for name in os.environ if name.startswith("TOOLBRIDGE_") and "_TEST_" not in name]
    database = Path(default_database_url().removeprefix("sqlite:///"))
    assert database.is_relative_to(away_from_the_user)
    assert cache_dir().is_relative_to(away_from_the_user)
    for secret_or_setting in (provider_keys_file(), settings_file(), default_token_file()):
        assert secret_or_setting.is_relative_to(away_from_the_user)


@pytest.mark.slow
def test_a_command_without_db_or_config_writes_into_the_temporary_home(away_from_the_user: Path) -> None:
    (away_from_the_user / "xdg_config_home" / "toolbridge").mkdir(parents=True, exist_ok=True)
    config = away_from_the_user / "xdg_config_home" / "toolbridge" / "toolbridge.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    database = Path(default_database_url().removeprefix("sqlite:///"))
    try:
        assert find_config_file() == config
        assert_the_chat_lands_in(database)
    finally:  # the temporary home is the whole session's: leave it as it was
        config.unlink()
        for leftover in database.parent.glob(database.name + "*"):
            leftover.unlink()


def assert_the_chat_lands_in(database: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolbridge", "ask", "--model", "demo", "What is 2 + 2?"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert database.is_file()
    history = subprocess.run(
        [sys.executable, "-m", "toolbridge", "history", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert [chat["title"] for chat in json.loads(history.stdout)] == ["What is 2 + 2?"]
