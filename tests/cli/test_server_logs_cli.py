"""`toolbridge servers --logs S`: the messages a server logged to toolbridge, at the configured level;
`/logs S` in a chat; `toolbridge call`: the progress a server reports, on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.cli_helpers import toolbridge
from toolbridge.config.model import ServerConfig

pytestmark = pytest.mark.slow


def test_servers_logs_shows_what_the_server_logged(
    tmp_path: Path, stdio_server: Callable[..., ServerConfig]
) -> None:
    reports = stdio_server("reports")
    config = tmp_path / "toolbridge.json"
    entry = {"command": reports.command, "args": reports.args, "log_level": "info"}
    config.write_text(json.dumps({"mcpServers": {"reports": entry, "gone": {"command": "no-such-server-x"}}}))

    shown = toolbridge(tmp_path, "servers", "--config", str(config), "--logs", "reports")
    as_json = toolbridge(tmp_path, "servers", "--config", str(config), "--logs", "reports", "--json")
    broken = toolbridge(tmp_path, "servers", "--config", str(config), "--logs", "gone")

    assert shown.returncode == 0, shown.stderr
    assert "NOTICE setup: log level set to info" in shown.stdout  # sent by the server when told the level
    [logged] = json.loads(as_json.stdout)
    assert (logged["level"], logged["logger"], logged["text"]) == ("notice", "setup", "log level set to info")
    assert broken.returncode == 1
    assert "no-such-server-x" in broken.stderr


def test_call_prints_the_progress_its_server_reports_on_stderr(
    tmp_path: Path, stdio_server: Callable[..., ServerConfig]
) -> None:
    reports = stdio_server("reports")
    config = tmp_path / "toolbridge.json"
    config.write_text(
        json.dumps({"mcpServers": {"reports": {"command": reports.command, "args": reports.args}}})
    )

    done = toolbridge(
        tmp_path,
        "call",
        "crunch",
        '{"steps": 2, "step_ms": 1}',
        "--server",
        "reports",
        "--config",
        str(config),
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "crunched 2 steps"
    assert "… reports.crunch 50% step 1 of 2" in done.stderr
    assert "… reports.crunch 100% step 2 of 2" in done.stderr


def test_logs_in_a_chat_shows_what_a_server_logged(
    tmp_path: Path, stdio_server: Callable[..., ServerConfig]
) -> None:
    reports = stdio_server("reports")
    config = tmp_path / "toolbridge.json"
    entry = {"command": reports.command, "args": reports.args, "log_level": "info"}
    config.write_text(json.dumps({"mcpServers": {"reports": entry}}))
    lines = ["/logs reports", "/logs", "/logs nobody", "/exit"]

    done = subprocess.run(
        [sys.executable, "-m", "toolbridge", "chat", "--model", "demo", "--config", str(config)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "TOOLBRIDGE_DB": str(tmp_path / "t.db")},
        cwd=tmp_path,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "NOTICE setup: log level set to info" in done.stdout
    assert "usage: /logs SERVER" in done.stderr
    assert "No MCP server named 'nobody'" in done.stderr


def test_servers_logs_shows_what_a_stateless_revision_server_logged_while_answering(
    tmp_path: Path, stdio_server: Callable[..., ServerConfig]
) -> None:
    # On 2026-07-28 there is no logging/setLevel: the level goes with each request, and a server logs
    # only while it answers one (this one, when its tools are listed).
    reports = stdio_server("reports")
    config = tmp_path / "toolbridge.json"
    entry = {"command": reports.command, "args": [*reports.args, "--both-revisions"], "log_level": "info"}
    config.write_text(json.dumps({"mcpServers": {"reports": entry}}))

    shown = toolbridge(tmp_path, "servers", "--config", str(config), "--logs", "reports")
    listed = toolbridge(tmp_path, "servers", "--config", str(config), "--json")

    assert shown.returncode == 0, shown.stderr
    assert "INFO setup: listing tools" in shown.stdout
    assert json.loads(listed.stdout)[0]["protocol"] == "2026-07-28"
