"""ServerPool: many servers started at once, one down server does not stop the others, and every
process is gone after exit, also when the surrounding task is cancelled or the program gets Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.errors import ServerError, ServerStartError
from toolbridge.mcp import ServerPool

pytestmark = pytest.mark.anyio


async def test_a_server_down_at_start_does_not_stop_the_others(stdio_server, unused_port: int) -> None:
    configs = {
        "works": stdio_server("basic"),
        "missing": ServerConfig(name="missing", transport="stdio", command="no-such-mcp-server-xyz"),
        "refused": ServerConfig(
            name="refused", transport="streamable-http", url=f"http://127.0.0.1:{unused_port}/mcp"
        ),
        "off": ServerConfig(name="off", transport="stdio", command="whatever", enabled=False),
    }
    async with ServerPool(configs) as pool:
        outcomes = await pool.connect_all()
        result = await pool.call_tool("works", "add", {"a": 2, "b": 3}, call_id="c")
        tools = await pool.list_tools("works")
        with pytest.raises(ServerStartError, match="not found on PATH"):
            await pool.call_tool("missing", "echo", {}, call_id="m")
        states = {name: pool.connection(name).state for name in pool.names}

    assert list(outcomes) == ["works", "missing", "refused"], "disabled servers are not connected"
    assert outcomes["works"] is None
    assert isinstance(outcomes["missing"], ServerStartError)
    assert isinstance(outcomes["refused"], ServerStartError)
    assert result.text == "5"
    assert "echo" in {tool.name for tool in tools}
    assert states == {"works": "connected", "missing": "failed", "refused": "failed", "off": "disabled"}
    assert pool.names == ["works", "missing", "refused", "off"]
    assert pool.enabled_names == ["works", "missing", "refused"]


async def test_servers_are_started_concurrently(stdio_server) -> None:
    # Servers that never answer, with a long connect timeout: one at a time, the second would only
    # start 30 s after the first. All three running at once proves they start together.
    configs = {f"s{i}": stdio_server("silent", name=f"s{i}", connect_timeout=30) for i in range(3)}
    async with ServerPool(configs) as pool, anyio.create_task_group() as group:
        group.start_soon(pool.connect_all)
        with anyio.fail_after(20):
            # Polling the children's stderr (nothing signals it), bounded by fail_after.
            while not all("silent server pid" in pool.connection(n).stderr_tail() for n in configs):  # noqa: ASYNC110
                await anyio.sleep(0.02)
        assert {pool.connection(name).state for name in configs} == {"connecting"}
        group.cancel_scope.cancel()


async def test_leaving_the_pool_while_a_server_is_still_starting_does_not_wait_for_its_timeout(
    stdio_server,
) -> None:
    # Waiting for the connect timeout would take an hour: fail_after catches that as a hang.
    with anyio.fail_after(30):
        async with ServerPool({"slow": stdio_server("silent", connect_timeout=3600)}) as pool:
            with anyio.move_on_after(0.5):
                await pool.connect_all()
            assert pool.connection("slow").state == "connecting"


async def test_an_unknown_server_name_is_an_error_listing_the_configured_ones(stdio_server) -> None:
    async with ServerPool({"basic": stdio_server("basic")}) as pool:
        with pytest.raises(
            ServerError, match=r"No MCP server named 'nope' is configured \(configured: basic\)"
        ):
            await pool.call_tool("nope", "echo", {}, call_id="c")


async def test_an_error_in_the_pool_block_reaches_the_caller_as_itself() -> None:
    config = ServerConfig(name="missing", transport="stdio", command="no-such-mcp-server-xyz")
    with pytest.raises(ServerStartError):
        async with ServerPool({"missing": config}) as pool:
            await pool.list_tools("missing")


@pytest.mark.slow
async def test_leaving_the_pool_stops_every_server_process(stdio_server, wait_until_gone) -> None:
    configs = {name: stdio_server("basic", name=name) for name in ("a", "b")}
    async with ServerPool(configs) as pool:
        await pool.connect_all()
        pids = [int((await pool.call_tool(name, "pid", {}, call_id="p")).text) for name in configs]
        connections = [pool.connection(name) for name in configs]
    assert all(wait_until_gone(pid, timeout=5) for pid in pids)
    assert [connection.state for connection in connections] == ["closed", "closed"]


@pytest.mark.slow
async def test_cancelling_the_surrounding_task_stops_every_server_process(
    stdio_server, wait_until_gone
) -> None:
    configs = {name: stdio_server("basic", name=name) for name in ("a", "b")}
    pids: list[int] = []
    with anyio.CancelScope() as scope:
        async with ServerPool(configs) as pool:
            pids = [int((await pool.call_tool(name, "pid", {}, call_id="p")).text) for name in configs]
            scope.cancel()
            await pool.call_tool("a", "sleep", {"ms": 60_000}, call_id="s")  # in flight when cancelled
    assert scope.cancelled_caught
    assert len(pids) == 2
    assert all(wait_until_gone(pid, timeout=10) for pid in pids)


@pytest.mark.slow
def test_ctrl_c_stops_every_server_process(stdio_server, wait_until_gone) -> None:
    script = Path(__file__).with_name("pool_under_sigint.py")
    server_script = stdio_server("basic").args[0]
    program = subprocess.Popen(
        [sys.executable, str(script), server_script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert program.stdout is not None
        line = program.stdout.readline()  # the pids, once both servers answer
        pids = [int(pid) for pid in line.split()]
        assert len(pids) == 2, (
            f"the helper did not start its servers: {program.stderr.read() if program.stderr else ''}"
        )
        program.send_signal(signal.SIGINT)
        program.wait(timeout=20)
    finally:
        if program.poll() is None:
            program.kill()
            program.wait()
    assert all(wait_until_gone(pid, timeout=5) for pid in pids)
