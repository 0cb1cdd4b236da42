"""JSON log lines: one object per line, with the ids bound in the task that logged (a real server's
lines are read in test_telemetry_shutdown.py)."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolbridge.cli.commands import app
from toolbridge.telemetry import JsonLogFormatter, bind_log_context


@pytest.fixture
def json_log() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    written = io.StringIO()
    handler = logging.StreamHandler(written)
    handler.setFormatter(JsonLogFormatter())
    logger = logging.getLogger("toolbridge.test_json_logs")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    yield logger, written
    logger.removeHandler(handler)


def test_json_lines_carry_the_ids_bound_in_the_task(json_log: tuple[logging.Logger, io.StringIO]) -> None:
    logger, written = json_log
    with bind_log_context(run_id="r1", chat_id="7", user_id=None):
        logger.info("run %s: %s", "r1", "ünïcode stays")
    logger.warning("outside any run")
    inside, outside = (json.loads(line) for line in written.getvalue().splitlines())
    assert inside["message"] == "run r1: ünïcode stays"
    assert (inside["level"], inside["logger"]) == ("INFO", "toolbridge.test_json_logs")
    assert (inside["run_id"], inside["chat_id"]) == ("r1", "7")
    assert "user_id" not in inside
    assert "time" in inside
    assert "run_id" not in outside
    assert outside["level"] == "WARNING"


def test_an_unknown_log_format_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["serve", "--log-format", "xml", "--config", str(tmp_path / "none.json")]
    )
    assert result.exit_code == 1
    assert "--log-format must be 'text' or 'json'" in result.output
