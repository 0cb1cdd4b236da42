"""The call benchmark's servers and script work (its numbers are read by people, never asserted)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.anyio
async def test_the_near_free_server_gets_the_handshake_after_refusing_discover() -> None:
    config = ServerConfig(
        name="tiny", transport="stdio", command=sys.executable, args=[str(BENCH / "tiny_server.py")]
    )
    async with ServerConnection(config) as server:
        tools = await server.list_tools()
        echo = await server.call_tool("echo", {"text": "hi"}, call_id="c")
        assert server.protocol_version == "2025-11-25"
    assert [tool.name for tool in tools] == ["echo"]
    assert echo.text == "hi"


def test_the_call_benchmark_runs_and_prints_ratios_from_its_own_run() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(BENCH / "mcp_calls.py"), "--calls", "8", "--concurrent", "2"],
        capture_output=True, text=True, timeout=110, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "== tiny server (near-free)" in done.stdout
    assert "== SDK server (tests/servers/basic.py), streamable HTTP" in done.stdout
    assert done.stdout.count("toolbridge speaks 2026-07-28 with it") == 2  # the SDK's server, both transports
    assert done.stdout.count("ratio toolbridge / SDK, same session") == 3
    # The client's CPU per call, toolbridge's against the bare SDK's, on each server.
    assert done.stdout.count("ratio toolbridge / bare ClientSession: median ") == 3
    assert done.stdout.count("ratio bare Client / bare ClientSession: client CPU ") == 3
    # Every target line says whether it is met: three per server, and the concurrent calls on two.
    targets = [line for line in done.stdout.splitlines() if line.startswith("target:")]
    assert len(targets) == 11
    assert sum("toolbridge's own CPU <= 100 us per call" in line for line in targets) == 3
    assert all(": met (" in line or ": NOT met (" in line for line in targets)


def test_the_keep_alive_benchmark_runs_and_counts_lost_calls() -> None:
    # Whether calls are lost is the bench's to measure (a busy machine's lag decides a few); here: it runs.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    command = [str(BENCH / "http_keepalive.py"), "--calls", "24", "--concurrent", "4", "--keep-alive", "0.05"]
    done = subprocess.run(
        [sys.executable, *command], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert re.search(r"^lost calls: \d+ \(0 expected\)$", done.stdout, re.MULTILINE), (
        done.stdout + done.stderr
    )
    assert "other failures: 0" in done.stdout
