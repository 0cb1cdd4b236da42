"""How much toolbridge's connection layer adds to MCP tool calls, next to a bare SDK session.

Run by hand: .venv/bin/python bench/mcp_calls.py [--calls 1000] [--concurrent 20]

Both sides talk to the same test server script (tests/servers/basic.py) over stdio, each to its own
process, in the same run:
- latency: sequential calls to `echo`, median and p95 per call, measured in alternating rounds so
  drift on a busy machine hits both sides alike;
- concurrency: wall time of N simultaneous calls to `sleep` (100 ms each).
Targets: toolbridge adds under 10 % per call; 20 concurrent 100 ms calls finish well under 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerPool

SERVER = str(Path(__file__).resolve().parent.parent / "tests" / "servers" / "basic.py")
ROUNDS = 4
WARM_UP = 50

Call = Callable[[str, dict[str, object]], Coroutine[Any, Any, object]]


async def timed_calls(call: Call, count: int) -> list[float]:
    latencies = []
    for i in range(count):
        started = time.perf_counter()
        await call("echo", {"text": f"message {i}"})
        latencies.append(time.perf_counter() - started)
    return latencies


async def concurrent_wall_time(call: Call, count: int) -> float:
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(count):
            arguments: dict[str, object] = {"ms": 100}
            group.start_soon(call, "sleep", arguments)
    return time.perf_counter() - started


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


async def main(calls: int, concurrent: int) -> None:
    config = ServerConfig(name="bench", transport="stdio", command=sys.executable, args=[SERVER], timeout=30)
    params = StdioServerParameters(command=sys.executable, args=[SERVER])
    with open("/dev/null", "w") as quiet:  # noqa: ASYNC230 - opened once, before any I/O is timed
        async with (
            ServerPool({"bench": config}) as pool,
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            await pool.list_tools("bench")
            counter = iter(range(10**9))

            async def via_toolbridge(name: str, arguments: dict[str, object]) -> object:
                return await pool.call_tool("bench", name, arguments, call_id=f"c{next(counter)}")

            async def via_sdk(name: str, arguments: dict[str, object]) -> object:
                return await session.call_tool(name, arguments)

            # The same SDK session toolbridge holds, called directly: same process, so the
            # difference to "toolbridge" is exactly what the connection layer adds per call.
            own_session = pool.connection("bench")._live.session  # type: ignore[union-attr]
            assert own_session is not None

            async def via_toolbridges_session(name: str, arguments: dict[str, object]) -> object:
                return await own_session.call_tool(name, arguments)

            sides: dict[str, Call] = {
                "toolbridge": via_toolbridge,
                "bare SDK": via_sdk,
                "SDK, same session": via_toolbridges_session,
            }
            for call in sides.values():
                await timed_calls(call, WARM_UP)

            latencies: dict[str, list[float]] = {side: [] for side in sides}
            for _ in range(ROUNDS):
                for side, call in sides.items():
                    latencies[side] += await timed_calls(call, calls // ROUNDS)
            walls = {side: await concurrent_wall_time(call, concurrent) for side, call in sides.items()}

    print(f"{calls} sequential calls to echo, {concurrent} concurrent calls to a 100 ms sleep (stdio)\n")
    print(f"{'':18} {'median ms':>10} {'p95 ms':>10} {'concurrent wall s':>18}")
    for side in sides:
        values = latencies[side]
        median, tail = statistics.median(values) * 1000, p95(values) * 1000
        print(f"{side:18} {median:10.3f} {tail:10.3f} {walls[side]:18.3f}")
    ours = latencies["toolbridge"]
    for other in ("bare SDK", "SDK, same session"):
        median_ratio = statistics.median(ours) / statistics.median(latencies[other])
        p95_ratio = p95(ours) / p95(latencies[other])
        wall_ratio = walls["toolbridge"] / walls[other]
        print(
            f"ratio toolbridge / {other}: median {median_ratio:.3f}, p95 {p95_ratio:.3f}, "
            f"concurrent {wall_ratio:.3f}"
        )
    print(
        '("bare SDK" runs its own server process, so on a busy machine it differs by process luck '
        'too; "SDK, same session" isolates the layer)'
    )
    layer = statistics.median(ours) / statistics.median(latencies["SDK, same session"])
    print(
        f"target: median overhead < 10 %: {'met' if layer < 1.10 else 'NOT met'} ({(layer - 1) * 100:+.1f} %)"
    )
    print(f"target: {concurrent} x 100 ms concurrently well under 1 s: {walls['toolbridge']:.3f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrent", type=int, default=20)
    options = parser.parse_args()
    anyio.run(main, options.calls, options.concurrent)
