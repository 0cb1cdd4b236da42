"""Running `toolbridge` as a real process in a test: its command, an environment of its own under
tmp_path (database, cache, XDG dirs; none of the developer's config or OpenAI settings; no colours, wide
lines), and config files naming our test servers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolbridge.config.model import ServerConfig

TOOLBRIDGE = [sys.executable, "-m", "toolbridge"]
StdioServer = Callable[..., ServerConfig]
DEVELOPER_SETTINGS = ("TOOLBRIDGE_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL")
"""Variables of the developer's shell that would change what a command under test does."""


def environment(tmp_path: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "COLUMNS": "200",
        "XDG_CONFIG_HOME": str(tmp_path / "config-home"),
        "XDG_DATA_HOME": str(tmp_path / "data-home"),
        "TOOLBRIDGE_DB": f"sqlite:///{tmp_path / 'toolbridge.db'}",
        "TOOLBRIDGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    for name in DEVELOPER_SETTINGS:
        env.pop(name, None)
    return env


def toolbridge(tmp_path: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`toolbridge ARGS` in `tmp_path` with `environment(tmp_path)`."""
    return subprocess.run(
        [*TOOLBRIDGE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
        env=environment(tmp_path),
        cwd=tmp_path,
        check=False,
    )


def write_config(tmp_path: Path, document: dict[str, Any], name: str = "toolbridge.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def stdio_entry(server: ServerConfig, **extra: Any) -> dict[str, Any]:
    return {"command": server.command, "args": server.args, **extra}
