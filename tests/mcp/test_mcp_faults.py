"""Servers that cannot start or misbehave: each fault ends in a clear error or is survived."""

from __future__ import annotations

import logging
import os
import re
import sys

import anyio
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.errors import ServerError, ServerStartError, ServerTimeoutError
from toolbridge.mcp import ServerConnection
from toolbridge.mcp._stderr import TAIL_BYTES

pytestmark = pytest.mark.anyio


async def test_a_command_not_on_path_fails_with_a_message_saying_so() -> None:
    config = ServerConfig(name="ghost", transport="stdio", command="no-such-mcp-server-xyz", args=["--flag"])
    async with ServerConnection(config) as server:
        with pytest.raises(ServerStartError) as raised:
            await server.connect()
        assert server.state == "failed"
        assert server.last_error == str(raised.value)
    message = str(raised.value)
    assert "'ghost'" in message
    assert "'no-such-mcp-server-xyz' was not found on PATH" in message
    assert "no-such-mcp-server-xyz --flag" in message
    assert raised.value.command == "no-such-mcp-server-xyz --flag"


async def test_a_missing_relative_command_is_looked_up_in_the_servers_cwd(tmp_path) -> None:
    config = ServerConfig(name="rel", transport="stdio", command="./bin/server", cwd=str(tmp_path))
    async with ServerConnection(config) as server:
        with pytest.raises(ServerStartError, match=r"the command './bin/server' does not exist"):
            await server.connect()


async def test_a_server_that_exits_at_start_reports_command_exit_code_and_stderr(stdio_server) -> None:
    config = stdio_server("exits_at_start", name="broken")
    async with ServerConnection(config) as server:
        with pytest.raises(ServerStartError) as raised:
            await server.call_tool("anything", {}, call_id="c")
    error = raised.value
    assert error.exit_code == 3
    assert "could not open database 'missing.db'" in error.stderr_tail
    message = str(error)
    assert "Server 'broken' exited with code 3 before completing the MCP handshake" in message
    assert "giving up" in message
    assert "exits_at_start.py" in message, "the command is part of the message"
    assert "toolbridge: server exit status" not in message


@pytest.mark.slow
async def test_each_use_of_a_failed_server_tries_to_start_it_once_more(tmp_path, stdio_server) -> None:
    command = tmp_path / "start-server"
    config = ServerConfig(name="later", transport="stdio", command=str(command))
    async with ServerConnection(config) as server:
        with pytest.raises(ServerStartError, match="does not exist"):
            await server.list_tools()
        # The server gets installed; the next use must try again rather than repeat the old error.
        basic = stdio_server("basic")
        await anyio.Path(command).write_text(f"#!/bin/sh\nexec {basic.command} {basic.args[0]}\n")
        await anyio.Path(command).chmod(0o755)
        tools = await server.list_tools()
        assert server.state == "connected"
    assert "echo" in {tool.name for tool in tools}


class Clock:
    """A clock the test moves by hand, so waiting out a backoff takes no time."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_server_that_keeps_failing_is_started_again_only_after_a_growing_wait(
    stdio_server, tmp_path
) -> None:
    starts = tmp_path / "starts.log"
    config = stdio_server("exits_at_start", name="broken", env={"START_LOG": str(starts)})
    clock = Clock()

    def started() -> int:
        return len(starts.read_text().splitlines())

    async with ServerConnection(config, clock=clock) as server:
        for _ in range(2):  # the first failure is retried at once: the user may have fixed it
            with pytest.raises(ServerStartError, match="exited with code 3"):
                await server.connect()
        assert started() == 2

        with pytest.raises(ServerStartError) as backing_off:
            await server.call_tool("anything", {}, call_id="c")
        assert started() == 2, "not started again while backing off"
        message = str(backing_off.value)
        assert "failed to start 2 times in a row" in message
        assert "the next attempt is on the first use in 1 s or later" in message
        assert "exited with code 3" in message, "the last failure is quoted"
        assert backing_off.value.exit_code == 3

        clock.now += 1
        with pytest.raises(ServerStartError, match="exited with code 3"):
            await server.list_tools()
        assert started() == 3
        clock.now += 1.5  # the wait doubled: 2 s now
        with pytest.raises(ServerStartError, match=r"3 times in a row.*in 1 s or later"):
            await server.connect()
        assert started() == 3


@pytest.mark.slow
async def test_a_start_that_works_resets_the_backoff(tmp_path, stdio_server) -> None:
    command = tmp_path / "start-server"
    config = ServerConfig(name="later", transport="stdio", command=str(command))
    clock = Clock()
    async with ServerConnection(config, clock=clock) as server:
        for _ in range(3):
            clock.now += 60
            with pytest.raises(ServerStartError, match="does not exist"):
                await server.connect()
        basic = stdio_server("basic")
        await anyio.Path(command).write_text(f"#!/bin/sh\nexec {basic.command} {basic.args[0]}\n")
        await anyio.Path(command).chmod(0o755)
        with pytest.raises(ServerStartError, match="3 times in a row"):
            await server.connect()
        clock.now += 60
        await server.connect()
        assert server.state == "connected"
        await server.call_tool("crash", {}, call_id="c")  # it dies: the next use restarts it at once
        assert (await server.call_tool("echo", {"text": "back"}, call_id="e")).text == "back"


async def test_a_server_that_never_answers_times_out_and_is_stopped(stdio_server, wait_until_gone) -> None:
    async with ServerConnection(stdio_server("silent", connect_timeout=0.5)) as server:
        with anyio.fail_after(10), pytest.raises(ServerTimeoutError) as raised:
            await server.connect()
    message = str(raised.value)
    assert "did not complete the MCP handshake within 0.5 s" in message
    assert "connect_timeout" in message
    found = re.search(r"silent server pid (\d+)", message)
    assert found, "its stderr is quoted"
    assert wait_until_gone(int(found.group(1))), "the process that timed out must be stopped"


async def test_garbage_on_stdout_is_skipped_and_counted_and_the_session_keeps_working(stdio_server) -> None:
    # The SDK turns each unparsable line into an exception value handed to our message handler.
    async with ServerConnection(stdio_server("garbage")) as server:
        first = await server.call_tool("noisy", {"text": "one"}, call_id="a")
        second = await server.call_tool("noisy", {"text": "two"}, call_id="b")
        assert server.state == "connected"
        assert server.ignored_messages == 4  # 2 lines at start, 1 per call
    assert (first.text, second.text) == ("one", "two")


async def test_garbage_on_stdout_is_logged_once_per_line_without_tracebacks(stdio_server, caplog) -> None:
    caplog.set_level(logging.WARNING)
    async with ServerConnection(stdio_server("garbage")) as server:
        await server.call_tool("noisy", {"text": "one"}, call_id="a")
    ours = [r for r in caplog.records if "sent non-JSON-RPC output, ignored" in r.getMessage()]
    assert len(ours) == 3, "our own line per garbage line (rate-limited)"
    assert [r.getMessage() for r in caplog.records if r.exc_info] == [], "no traceback per line"


async def test_a_disabled_server_is_never_started() -> None:
    config = ServerConfig(name="off", transport="stdio", command=sys.executable, enabled=False)
    async with ServerConnection(config) as server:
        assert server.state == "disabled"
        with pytest.raises(ServerError, match=r"'off' is disabled in the config"):
            await server.call_tool("echo", {}, call_id="c")


async def test_a_closed_connection_refuses_to_be_used(stdio_server) -> None:
    async with ServerConnection(stdio_server("basic")) as server:
        pass
    with pytest.raises(ServerError, match="is closed"):
        await server.connect()


async def test_an_http_server_that_is_not_running_fails_with_the_url_and_what_to_check(
    unused_port: int,
) -> None:
    url = f"http://127.0.0.1:{unused_port}/mcp"
    for transport in ("streamable-http", "sse"):
        config = ServerConfig(name="remote", transport=transport, url=url, connect_timeout=5)
        async with ServerConnection(config) as server:
            with anyio.fail_after(10), pytest.raises(ServerStartError) as raised:
                await server.connect()
        assert f"could not be reached at {url}" in str(raised.value)
        assert "Check that the server is running" in str(raised.value)


async def test_a_server_flooding_stderr_keeps_only_the_last_64_kb_and_counts_the_rest(stdio_server) -> None:
    async with ServerConnection(stdio_server("floods_stderr")) as server:
        pid = int((await server.call_tool("pid", {}, call_id="p")).text)
        flooded = await server.call_tool("flood", {"megabytes": 30}, call_id="f")
        assert flooded.text == "flooded", "the server was never blocked on its stderr"
        # Whatever the server's stderr is (a file, even a deleted one, or a pipe), it takes no disk.
        assert os.stat(f"/proc/{pid}/fd/2").st_blocks * 512 < 1024 * 1024
        tail = server.stderr_tail(lines=100_000)
        dropped = server.stderr_dropped
    assert tail.endswith("the last line of the flood")
    assert len(tail.encode()) <= TAIL_BYTES
    assert dropped >= 30 * 1000 * 1000 - TAIL_BYTES


async def test_a_server_flooding_stderr_produces_a_bounded_number_of_log_lines(stdio_server, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="toolbridge.mcp.stderr")
    async with ServerConnection(stdio_server("floods_stderr", name="loud")) as server:
        flooded = await server.call_tool("flood", {"megabytes": 2}, call_id="f")
        assert flooded.text == "flooded"
        server.stderr_tail()  # takes what is still in the pipe, as the drain would
    lines = [r.getMessage() for r in caplog.records if r.name == "toolbridge.mcp.stderr"]
    assert lines[0].startswith("server 'loud' stderr: 0 xxx"), "what the server says is logged"
    assert len(lines[0]) < 1100, "one stderr line is one log line, cut to a readable length"
    # 2,001 lines written; the log gets the first few of each interval and one count of the rest.
    assert len(lines) < 100
    assert re.fullmatch(
        r"server 'loud' stderr: suppressed \d+ lines \(at most 20 are logged per 10 s\)", lines[-1]
    )
