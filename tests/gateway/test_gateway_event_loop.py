"""The stdio gateway runs on uvloop: every message it passes on costs event-loop turns, which asyncio's
own loop spends in Python (bench/gateway.py: about a tenth of the gateway's CPU per call). Other
commands keep asyncio's loop."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
import uvloop
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from server_paths import test_server_path
from toolbridge.cli._common import run

pytestmark = pytest.mark.anyio


def test_commands_run_on_asyncios_loop_and_servers_on_uvloop() -> None:
    async def loop() -> type[asyncio.AbstractEventLoop]:
        return type(asyncio.get_running_loop())

    assert run(loop, fast_loop=True) is uvloop.Loop
    assert not issubclass(run(loop), uvloop.Loop)


def _our_gateway() -> int:
    """The `toolbridge gateway` process this test started."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if parent == os.getpid() and b"\0toolbridge\0gateway\0" in command:
            return int(stat.parent.name)
    raise AssertionError("no toolbridge gateway started by this test")


def _mapped_files(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/maps").read_text().splitlines()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the process's memory map (Linux)")
async def test_the_stdio_gateway_serves_on_uvloop(tmp_path: Path) -> None:
    config = tmp_path / "toolbridge.json"
    upstream = {"command": sys.executable, "args": [test_server_path("basic")]}
    config.write_text(json.dumps({"mcpServers": {"basic": upstream}}), encoding="utf-8")
    arguments = ["-m", "toolbridge", "gateway", "--config", str(config), "--db", str(tmp_path / "calls.db")]
    gateway = StdioServerParameters(command=sys.executable, args=arguments, env=dict(os.environ))
    async with Client(gateway) as client:
        assert not (await client.call_tool("pid", {})).is_error  # serving
        loaded = _mapped_files(_our_gateway())

    assert any("uvloop/loop" in path for path in loaded)
