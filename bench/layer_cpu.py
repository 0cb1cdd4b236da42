"""toolbridge's own CPU per tool call, layer by layer, with the wire taken out: precise on a busy machine.

Run by hand: .venv/bin/python bench/layer_cpu.py [--calls 200] [--rounds 40]

`bench/mcp_calls.py` measures real calls, whose CPU time varies by +-25 us from run to run on a shared
machine: more than a change to toolbridge's layer moves. Here the tiny server is connected as usual, then
the session's `send_request` (where the SDK writes the request and waits for its answer) is replaced by
one that answers at once, so what is left is Python that runs on every call. Each side is timed in
alternating rounds and the fastest round counts (interference only ever adds time). Sides, each on top
of the one before: the SDK's `ClientSession.call_tool` (with the timeout and progress callback
toolbridge passes), the SDK's `Client` over it, `ServerConnection.call_tool_mcp` (the call, its
bookkeeping, the conversion to a `ToolResult`), the pipeline without and with its observers, and
`Toolbox.call`. For a before and after, run it on both checkouts (`PYTHONPATH=<old>/src`), alternating.
On a real call each microsecond here costs about two to three (the caches are cold by then).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mcp

from toolbridge.config.model import Config, ServerConfig
from toolbridge.tools import Toolbox
from toolbridge.tools.pipeline import ToolPipeline
from toolbridge.types import ToolCall

TINY = Path(__file__).resolve().parent / "tiny_server.py"
WARM_UP = 200


async def answered_at_once(request: Any, result_type: Any, **options: Any) -> mcp.CallToolResult:
    """What `ClientSession.send_request` returns for an `echo` call, without sending it."""
    return mcp.CallToolResult(content=[mcp.TextContent(type="text", text=request.params.arguments["text"])])


async def main(calls: int, rounds: int) -> None:
    config = ServerConfig(name="bench", transport="stdio", command=sys.executable, args=[str(TINY)])
    async with Toolbox(Config(servers={"bench": config}), native=False) as toolbox:
        await toolbox.list_tools()
        connection = toolbox.pool.connection("bench")
        live = connection._live  # the session toolbridge holds
        assert live is not None
        assert live.session is not None
        assert live.client is not None
        session, client = live.session, live.client
        session.send_request = answered_at_once  # type: ignore[method-assign]
        unobserved = ToolPipeline(toolbox.registry, [])

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            pass

        def arguments(i: int) -> dict[str, Any]:
            return {"text": f"message {i}"}

        sides: dict[str, Callable[[int], Awaitable[object]]] = {
            "ClientSession.call_tool": lambda i: session.call_tool(
                "echo", arguments(i), read_timeout_seconds=30, progress_callback=progress
            ),
            "Client.call_tool": lambda i: client.call_tool(
                "echo", arguments(i), read_timeout_seconds=30, progress_callback=progress
            ),
            "call_tool_mcp": lambda i: connection.call_tool_mcp("echo", arguments(i), call_id="c"),
            "pipeline, no observers": lambda i: unobserved.call(
                ToolCall(name="echo", arguments=arguments(i))
            ),
            "pipeline": lambda i: toolbox.calls.call(ToolCall(name="echo", arguments=arguments(i))),
            "Toolbox.call": lambda i: toolbox.call("echo", arguments(i)),
        }
        for call in sides.values():
            for i in range(WARM_UP):
                await call(i)
        fastest = dict.fromkeys(sides, float("inf"))
        for _ in range(rounds):
            for side, call in sides.items():
                started = time.process_time()
                for i in range(calls):
                    await call(i)
                fastest[side] = min(fastest[side], (time.process_time() - started) / calls)
    print(f"CPU per call, fastest of {rounds} rounds of {calls} calls, send_request answered at once\n")
    below = None
    for side, seconds in fastest.items():
        added = f"{(seconds - fastest[below]) * 1e6:+6.1f} over {below}" if below else ""
        print(f"{side:24} {seconds * 1e6:6.1f} us  {added}")
        below = side
    own = fastest["Toolbox.call"] - fastest["Client.call_tool"]
    print(f"\ntoolbridge's own Python per call (Toolbox.call over the SDK's Client): {own * 1e6:.1f} us")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=40)
    options = parser.parse_args()
    anyio.run(main, options.calls, options.rounds)
