"""`toolbridge ask` on a terminal: a call's spinner shows the progress its server reports
("reports.crunch 50% step 1 of 2"). Run as a real process on a pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow


def run_on_a_terminal(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """Run toolbridge with a pseudo-terminal as stdout and stdin; everything it drew, once it exits."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolbridge", *args],
        stdin=terminal,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    os.close(terminal)
    drawn = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal's other end closed: the process is gone
            break
        if not chunk:
            break
        drawn += chunk
    os.close(controller)
    assert process.wait(timeout=60) == 0, process.stderr.read().decode() if process.stderr else ""
    # Without the terminal's colour and cursor codes: what a person reads.
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn.decode("utf-8", "replace"))


def test_the_spinner_of_a_call_shows_its_servers_progress(
    tmp_path: Path, stdio_server: Callable[..., ServerConfig]
) -> None:
    reports = stdio_server("reports")
    script = [
        Turn.tool_calls(ToolCallSpec("crunch", {"steps": 2, "step_ms": 200})),
        Turn.text("Crunched."),
    ]
    env = {**os.environ, "TOOLBRIDGE_DB": str(tmp_path / "t.db"), "COLUMNS": "160", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    env.pop("TOOLBRIDGE_CONFIG", None)
    with ScriptedModelServer(script) as model:
        config = tmp_path / "toolbridge.json"
        config.write_text(
            json.dumps(
                {
                    "models": {
                        "m": {"provider": "openai-compatible", "base_url": model.base_url, "model": "m"}
                    },
                    "default_model": "m",
                    "mcpServers": {"reports": {"command": reports.command, "args": reports.args}},
                }
            )
        )
        drawn = run_on_a_terminal(["ask", "--config", str(config), "Crunch it"], env, tmp_path)

    assert "reports.crunch 50% step 1 of 2" in drawn
    assert "✓ crunch" in drawn
    assert "Crunched." in drawn
