"""A SQLite database serves one `toolbridge serve`: a second server on the same file is refused with an
error naming PostgreSQL, the lock goes with the first server however it ends (SIGKILL too), and commands
that read the database are never refused."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from replicas import READY_TIMEOUT, start_replica
from server_helpers import toolbridge_command, write_config

from toolbridge.store.serving import serving_lock
from toolbridge.testing import ScriptedModelServer

pytestmark = pytest.mark.slow


def serve_briefly(config: Path, db_url: str) -> subprocess.CompletedProcess[str]:
    """`toolbridge serve` expected to give up at once."""
    args = ["serve", "--config", str(config), "--db", db_url, "--port", "0"]
    return subprocess.run(toolbridge_command(*args), capture_output=True, text=True, timeout=READY_TIMEOUT)


def test_a_second_server_on_one_sqlite_file_is_refused_until_the_first_dies(tmp_path: Path) -> None:
    database = tmp_path / "toolbridge.db"
    db_url = f"sqlite:///{database}"
    with ScriptedModelServer() as model:
        config = write_config(tmp_path, model)
        first = start_replica("a", config, db_url, tmp_path)
        try:
            first.wait_ready(time.monotonic() + READY_TIMEOUT)
            second = serve_briefly(config, db_url)
            assert second.returncode != 0
            assert "PostgreSQL" in second.stderr, second.stderr
            assert str(database) in second.stderr
            assert f"pid {first.pid}" in second.stderr
            assert "Traceback" not in second.stderr

            history = subprocess.run(
                toolbridge_command("history", "--db", db_url, "--json"),
                capture_output=True,
                text=True,
                timeout=READY_TIMEOUT,
            )
            assert history.returncode == 0, history.stderr
            assert first.http().get("/readyz").status_code == 200  # the refused one did not disturb it

            first.kill()  # no clean exit: the kernel drops the lock with the process
            after = start_replica("b", config, db_url, tmp_path)
            try:
                after.wait_ready(time.monotonic() + READY_TIMEOUT)
            finally:
                after.close()
        finally:
            first.close()


def test_a_database_whose_folder_cannot_take_the_lock_is_still_served(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    database = tmp_path / "toolbridge.db"
    (tmp_path / "toolbridge.db.serve-lock").mkdir()  # the lock file cannot be opened
    with serving_lock(f"sqlite:///{database}"):
        pass
    assert "no serving lock" in caplog.text
    with serving_lock("postgresql+psycopg://u:p@127.0.0.1/db"), serving_lock("sqlite://"):
        pass  # nothing to hold for PostgreSQL, nor for an in-memory database
