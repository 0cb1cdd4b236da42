"""The gateway's stdio transport: over pipes, messages are read and written on the event loop (no worker
thread per message), and the process's own stdout is kept off the wire while it serves."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import anyio
import anyio.to_thread
import mcp_types as mcp
import pytest
from mcp.shared.message import SessionMessage

from toolbridge.gateway._stdio import _loop_can_watch, stdio_streams

pytestmark = pytest.mark.anyio


@pytest.fixture
def pipes() -> Iterator[tuple[tuple[int, int], tuple[int, int]]]:
    """(client -> gateway) and (gateway -> client) pipes, each as (read end, write end)."""
    into, out_of = os.pipe(), os.pipe()
    yield into, out_of
    for fd in (*into, *out_of):
        with suppress(OSError):  # closed by the test already
            os.close(fd)


async def _read_line(fd: int) -> bytes:
    os.set_blocking(fd, False)
    received = b""
    with anyio.fail_after(10):
        while not received.endswith(b"\n"):
            await anyio.wait_readable(fd)
            received += os.read(fd, 65536)
    return received


async def test_messages_over_pipes_take_no_worker_thread_and_stray_output_stays_off_the_wire(
    pipes: tuple[tuple[int, int], tuple[int, int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    (gateway_in, client_out), (client_in, gateway_out) = pipes

    def no_threads(*args: object, **kwargs: object) -> None:
        raise AssertionError("a worker thread was used for stdio")

    monkeypatch.setattr(anyio.to_thread, "run_sync", no_threads)
    with anyio.fail_after(10):
        async with stdio_streams(gateway_in, gateway_out) as (read, write):
            os.write(gateway_out, b"a stray print\n")  # what the process writes to its own stdout
            os.write(client_out, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
            received = await read.receive()
            assert isinstance(received, SessionMessage)
            assert isinstance(received.message, mcp.JSONRPCRequest)
            assert received.message.method == "ping"
            await write.send(SessionMessage(mcp.JSONRPCResponse(jsonrpc="2.0", id=1, result={})))
            assert json.loads(await _read_line(client_in)) == {"jsonrpc": "2.0", "id": 1, "result": {}}
            os.close(client_out)  # the client is done: the gateway reads the end of its input
            await write.aclose()  # and the server is done writing
    os.write(gateway_out, b"after\n")  # the descriptor is the wire again
    assert await _read_line(client_in) == b"after\n"


async def test_only_pipes_and_sockets_are_watched_by_the_event_loop(
    pipes: tuple[tuple[int, int], tuple[int, int]], tmp_path: Path
) -> None:
    (pipe_end, _), _ = pipes
    assert _loop_can_watch(pipe_end)
    with (tmp_path / "requests.jsonl").open("w") as regular_file:
        assert not _loop_can_watch(regular_file.fileno())  # files and terminals: the SDK's threads serve them
