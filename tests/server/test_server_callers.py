"""The call log knows who called: an agent's run, `toolbridge gateway`'s MCP client, an HTTP client of
`POST /tools/{name}`, or `toolbridge call`; `toolbridge stats` and `/api/stats` count each apart."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from server_helpers import serve_in_thread, toolbridge_command

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

CALCULATE = ToolCallSpec("calculate", {"expression": "15 + 27"})


def _toolbridge(*args: str) -> str:
    done = subprocess.run(toolbridge_command(*args), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


async def _call_through_the_gateway(config: Path, db: Path) -> None:
    gateway = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolbridge", "gateway", "--config", str(config), "--db", str(db)],
        env=dict(os.environ),  # this checkout's toolbridge (PYTHONPATH), not the SDK's short default list
    )
    async with Client(gateway) as client:
        result = await client.call_tool("calculate", {"expression": "1 + 1"})
        assert not result.is_error


def test_stats_show_gateway_openapi_and_cli_calls_apart_from_agent_calls(tmp_path: Path) -> None:
    config, db = tmp_path / "toolbridge.json", tmp_path / "toolbridge.db"
    with (
        ScriptedModelServer([Turn.tool_calls(CALCULATE), Turn.text("42.")]) as model,
        serve_in_thread(tmp_path, model) as server,
    ):
        server.openai().chat.completions.create(
            model="default", messages=[{"role": "user", "content": "15+27?"}]
        )
        http = server.http()
        for _ in range(2):
            assert http.post("/tools/calculate", json={"expression": "2 * 21"}).status_code == 200
        served = {row["tool"]: row for row in http.get("/api/stats").json()}
    assert served["calculate"]["callers"] == {"openapi": 2, "agent": 1}

    anyio.run(_call_through_the_gateway, config, db)
    _toolbridge("call", "calculate", '{"expression": "3 + 4"}', "--config", str(config), "--db", str(db))

    (calculate,) = json.loads(_toolbridge("stats", "--json", "--db", str(db)))
    assert calculate["calls"] == 5
    assert calculate["callers"] == {"openapi": 2, "agent": 1, "cli": 1, "gateway": 1}
