"""A server of both revisions that is slow to answer `server/discover`, as a loaded 2026-07-28 server is:
each answer to it leaves $DISCOVER_DELAY seconds (default 1) after the request came; everything else is
answered at once. A client that gave up on the probe and sent `initialize` gets it refused with -32022
(the SDK's server has settled on the 2026 revision with the probe); with $REFUSE_INITIALIZE set, with a
plain invalid-request error instead, as a 2026-only HTTP server's bare 400 reaches the client (with
REFUSE_INITIALIZE=garbage, with a result that is no InitializeResult, as the harness's 2026 mocks answer). It appends
the method of every request it receives to the file named by $REQUEST_LOG, when set.

Run: DISCOVER_DELAY=1 REQUEST_LOG=requests.txt python tests/servers/slow_discover.py   (stdio only)
"""

from __future__ import annotations

import os
from typing import Any

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_dual_era_loop
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse

server = MCPServer("slow-discover", log_level="WARNING")
DELAY = float(os.environ.get("DISCOVER_DELAY", "1"))


@server.tool()
def echo(text: str) -> str:
    """Return `text` unchanged."""
    return text


def _append(path: str | None, line: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as log:  # a line at a time: the test reads it meanwhile
            log.write(line + "\n")


async def note_requests(
    incoming: MemoryObjectReceiveStream[SessionMessage | Exception],
    passed: MemoryObjectSendStream[SessionMessage | Exception],
    discover_ids: set[Any],
    write: MemoryObjectSendStream[SessionMessage],
) -> None:
    async with passed:
        async for item in incoming:
            if isinstance(item, SessionMessage) and isinstance(item.message, JSONRPCRequest):
                request = item.message
                _append(os.environ.get("REQUEST_LOG"), request.method)
                if request.method == "server/discover":
                    discover_ids.add(request.id)
                if request.method == "initialize" and os.environ.get("REFUSE_INITIALIZE") == "garbage":
                    garbage = JSONRPCResponse(jsonrpc="2.0", id=request.id, result={"resultType": "complete"})
                    await write.send(SessionMessage(garbage))
                    continue
                if request.method == "initialize" and os.environ.get("REFUSE_INITIALIZE"):
                    refusal = ErrorData(code=INVALID_REQUEST, message="this server speaks only 2026-07-28")
                    await write.send(
                        SessionMessage(JSONRPCError(jsonrpc="2.0", id=request.id, error=refusal))
                    )
                    continue
            await passed.send(item)


async def hold_discover_answers(
    answers: MemoryObjectReceiveStream[SessionMessage],
    write: MemoryObjectSendStream[SessionMessage],
    discover_ids: set[Any],
    group: anyio.abc.TaskGroup,
) -> None:
    async def later(item: SessionMessage) -> None:
        await anyio.sleep(DELAY)  # the slowness this server stands for
        await write.send(item)

    async for item in answers:
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id in discover_ids:
            group.start_soon(later, item)
        else:
            await write.send(item)


async def main() -> None:
    lowlevel = server._lowlevel_server
    discover_ids: set[Any] = set()
    passed, to_serve = anyio.create_memory_object_stream[Any](16)
    answers_in, answers = anyio.create_memory_object_stream[Any](16)
    async with (
        stdio_server() as (read, write),
        lowlevel.lifespan(lowlevel) as state,
        anyio.create_task_group() as group,
    ):
        group.start_soon(hold_discover_answers, answers, write, discover_ids, group)
        options = lowlevel.create_initialization_options()
        group.start_soon(
            lambda: serve_dual_era_loop(
                lowlevel, to_serve, answers_in, lifespan_state=state, init_options=options
            )
        )
        await note_requests(read, passed, discover_ids, write)
        # The client closed stdin: gone, so nothing in flight (a subscriptions/listen stream) is waited for,
        # and stdout is closed here (the serving loop closes only its own end, `answers_in`).
        group.cancel_scope.cancel()
        await write.aclose()


if __name__ == "__main__":
    anyio.run(main)
