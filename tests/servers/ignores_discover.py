"""A server of the 2025-11-25 revision that never answers `server/discover`, not even with an error, as
some servers written before 2026-07-28 do. It appends the method of every request it receives to the
file named by $REQUEST_LOG, so a test can see whether a client probed.

Run: REQUEST_LOG=requests.txt python tests/servers/ignores_discover.py   (stdio only)
"""

from __future__ import annotations

import os
from typing import Any

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCRequest

server = MCPServer("ignores-discover", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Return `text` unchanged."""
    return text


@server.tool()
def crash() -> str:
    """Exit at once, so the next use is a reconnect."""
    os._exit(3)


def _append(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as log:  # a line at a time: the test reads it meanwhile
        log.write(line + "\n")


async def log_and_drop_discover(
    incoming: MemoryObjectReceiveStream[SessionMessage | Exception],
    passed: MemoryObjectSendStream[SessionMessage | Exception],
    log_path: str,
) -> None:
    async with passed:
        async for item in incoming:
            if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCRequest):
                _append(log_path, item.message.method)
                if item.message.method == "server/discover":
                    continue  # never answered
            await passed.send(item)


async def main() -> None:
    lowlevel = server._lowlevel_server
    passed, to_serve = anyio.create_memory_object_stream[Any](16)
    async with (
        stdio_server() as (read, write),
        lowlevel.lifespan(lowlevel) as state,
        anyio.create_task_group() as group,
    ):
        group.start_soon(log_and_drop_discover, read, passed, os.environ["REQUEST_LOG"])
        options = lowlevel.create_initialization_options()
        await serve_loop(lowlevel, to_serve, write, lifespan_state=state, init_options=options)
        group.cancel_scope.cancel()


if __name__ == "__main__":
    anyio.run(main)
