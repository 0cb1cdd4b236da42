"""`toolbridge servers` names the MCP revision each server speaks, in its table and its --json."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.cli_helpers import in_process
from toolbridge.config.model import ServerConfig

pytestmark = pytest.mark.slow


def test_servers_shows_which_revision_each_server_speaks(
    tmp_path: Path, stdio_server: Callable[..., ServerConfig]
) -> None:
    basic = stdio_server("basic")
    entry = {"command": basic.command, "args": basic.args}
    config = tmp_path / "toolbridge.json"
    servers = {"new": entry, "old": {**entry, "protocol": "2025-11-25"}, "off": {**entry, "enabled": False}}
    config.write_text(json.dumps({"mcpServers": servers}))

    def servers_command(*extra: str) -> subprocess.CompletedProcess[str]:
        return in_process("servers", "--config", str(config), *extra)

    listed = servers_command("--json")
    table = servers_command()

    assert listed.returncode == 0, listed.stderr
    protocols = {row["name"]: row["protocol"] for row in json.loads(listed.stdout)}
    assert protocols == {"new": "2026-07-28", "old": "2025-11-25", "off": None}
    assert table.returncode == 0, table.stderr
    rows = {line.split()[0]: line for line in table.stdout.splitlines() if line.startswith(("new ", "old "))}
    assert "2026-07-28" in rows["new"]
    assert "2025-11-25" in rows["old"]
