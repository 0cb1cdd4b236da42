"""How much toolbridge adds to MCP tool calls, next to the bare SDK, on a near-free and on a real server.

Run by hand: .venv/bin/python bench/mcp_calls.py [--calls 1000] [--concurrent 20]

Three runs, all in the same process:
- bench/tiny_server.py over stdio, which answers in microseconds (2025-11-25 handshake): here the
  client's own cost is most of a call, so this is where toolbridge's layer shows;
- tests/servers/basic.py, the SDK's own server, over stdio (each side its own process) and over
  streamable HTTP (one process for all sides). It speaks 2026-07-28, which toolbridge and the SDK's
  `Client` pick; a bare `ClientSession` speaks the handshake revision.
Sides: `toolbridge` (`Toolbox.call`: routing, argument check, cache policy, the call, the conversion),
`SDK, same session` (the `ClientSession` inside toolbridge's connection, called directly: the difference
is exactly toolbridge's layer), `bare ClientSession` and `bare Client` (the SDK alone).
Latency is the median and p95 of sequential `echo` calls, measured in alternating rounds so drift on a
busy machine hits every side alike, with the CPU time this process (the client) spent per call, which a
busy machine skews far less than latency, and the CPU time the server process spent per call (Linux
/proc; over HTTP the handshake revision's sessions cost the SDK's server more than stateless calls); on
basic.py also the wall time of N concurrent 100 ms `sleep` calls.
Ratios are against the sides measured in this same run. Targets, each printed with whether it is met:
toolbridge's layer <= 1.10x the session it wraps on each server; toolbridge's own CPU (the pipeline:
`Toolbox.call` over the session it wraps) <= 100 us per call; a call through `Toolbox` within 1.10x of a
bare `ClientSession`'s CPU; N concurrent 100 ms calls well under 1 s. Run it on an older checkout
(`PYTHONPATH=<old>/src python bench/mcp_calls.py`) for the before and after.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AsyncExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from _common import Measured, child_pids, free_port, in_alternating_rounds, listening, p95
from toolbridge.config.model import Config, ServerConfig
from toolbridge.tools import Toolbox

HERE = Path(__file__).resolve().parent
BASIC = HERE.parent / "tests" / "servers" / "basic.py"
SERVERS: dict[str, tuple[Path, bool]] = {
    "tiny server (near-free), stdio": (HERE / "tiny_server.py", False),
    "SDK server (tests/servers/basic.py), stdio": (BASIC, False),
    "SDK server (tests/servers/basic.py), streamable HTTP": (BASIC, True),
}
ROUNDS = 4
WARM_UP = 50
LAYER, BASELINE = "toolbridge", "SDK, same session"
OWN_CPU_GOAL = 100e-6
"""CPU seconds per call toolbridge's own layer may add to the session it wraps (the issue's 0.1 ms)."""
CONCURRENT_GOAL = 0.5
"""Seconds N concurrent 100 ms calls may take for "well under 1 s"; calls run one by one take N x 0.1 s."""

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


@contextmanager
def http_server(script: Path) -> Iterator[tuple[str, int]]:
    """`script` serving streamable HTTP on a free 127.0.0.1 port: its URL and process id."""
    port = free_port()
    with listening([sys.executable, str(script), "--transport", "http", "--port", str(port)], port) as pid:
        yield f"http://127.0.0.1:{port}/mcp", pid


async def open_sides(
    stack: AsyncExitStack, script: Path, quiet: Any, *, http: bool
) -> tuple[dict[str, Call], dict[str, int | None], str]:
    """The four ways to call `script`'s tools, each side's server process, and toolbridge's revision.

    Over stdio each side starts its own server process; over HTTP they share one."""
    known = child_pids()

    def new_server() -> int | None:
        started = child_pids() - known
        known.update(started)
        return started.pop() if len(started) == 1 else None

    if http:
        url, shared = stack.enter_context(http_server(script))
        config = ServerConfig(name="bench", transport="streamable-http", url=url, timeout=30)
        transport: Any = streamable_http_client(url)
        target: Any = url
    else:
        config = ServerConfig(
            name="bench", transport="stdio", command=sys.executable, args=[str(script)], timeout=30
        )
        target = StdioServerParameters(command=sys.executable, args=[str(script)])
        transport = stdio_client(target, errlog=quiet)
    toolbox = await stack.enter_async_context(Toolbox(Config(servers={"bench": config}), native=False))
    await toolbox.list_tools()
    toolbox_server = shared if http else new_server()
    read, write = await stack.enter_async_context(transport)
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    await session.list_tools()
    session_server = shared if http else new_server()
    client = await stack.enter_async_context(Client(target))
    await client.list_tools()
    client_server = shared if http else new_server()
    connection = toolbox.pool.connection("bench")
    own_session = connection._live.session  # type: ignore[union-attr]  # the session toolbridge holds
    assert own_session is not None

    async def via_toolbridge(name: str, arguments: dict[str, object]) -> object:
        return await toolbox.call(name, arguments)

    async def via_same_session(name: str, arguments: dict[str, object]) -> object:
        return await own_session.call_tool(name, arguments)

    async def via_session(name: str, arguments: dict[str, object]) -> object:
        return await session.call_tool(name, arguments)

    async def via_client(name: str, arguments: dict[str, object]) -> object:
        return await client.call_tool(name, arguments)

    sides: dict[str, Call] = {
        LAYER: via_toolbridge,
        BASELINE: via_same_session,
        "bare ClientSession": via_session,
        "bare Client": via_client,
    }
    servers = {
        LAYER: toolbox_server,
        BASELINE: toolbox_server,
        "bare ClientSession": session_server,
        "bare Client": client_server,
    }
    return sides, servers, connection.protocol_version or "?"


async def measure(script: Path, calls: int, concurrent: int | None, *, http: bool) -> None:
    with open("/dev/null", "w") as quiet:  # noqa: ASYNC230 - opened once, before any I/O is timed
        async with AsyncExitStack() as stack:
            sides, servers, protocol = await open_sides(stack, script, quiet, http=http)
            for call in sides.values():
                await timed_calls(call, WARM_UP)
            timers = {side: partial(timed_calls, call) for side, call in sides.items()}
            pids = {side: [pid] for side, pid in servers.items()}
            measured = await in_alternating_rounds(timers, pids, calls, ROUNDS)
            walls = {}
            if concurrent:
                walls = {side: await concurrent_wall_time(call, concurrent) for side, call in sides.items()}
    report(measured, walls, protocol, concurrent)


def report(measured: Measured, walls: dict[str, float], protocol: str, concurrent: int | None) -> None:
    latencies, client_cpu, server_cpu = measured.latencies, measured.client_cpu, measured.server_cpu
    print(f"toolbridge speaks {protocol} with it\n")
    wall_title = f"{concurrent} x 100 ms wall s" if walls else ""
    print(
        f"{'':20} {'median us':>10} {'p95 us':>10} {'client CPU us':>14} {'server CPU us':>14} {wall_title:>22}"
    )
    for side, values in latencies.items():
        wall = f"{walls[side]:22.3f}" if walls else ""
        median, tail = statistics.median(values) * 1e6, p95(values) * 1e6
        ours, theirs = client_cpu[side] * 1e6, server_cpu[side] * 1e6
        print(f"{side:20} {median:10.1f} {tail:10.1f} {ours:14.1f} {theirs:14.1f} {wall}")
    mine = latencies[LAYER]
    for other in [side for side in latencies if side != LAYER]:
        median_ratio = statistics.median(mine) / statistics.median(latencies[other])
        tail_ratio = p95(mine) / p95(latencies[other])
        cpu_ratio = client_cpu[LAYER] / client_cpu[other]
        print(
            f"ratio toolbridge / {other}: median {median_ratio:.3f}, p95 {tail_ratio:.3f}, "
            f"client CPU {cpu_ratio:.3f}"
        )
    sdk = client_cpu["bare Client"] / client_cpu["bare ClientSession"]
    print(f"ratio bare Client / bare ClientSession: client CPU {sdk:.3f} (the SDK's Client over its session)")
    layer = statistics.median(mine) / statistics.median(latencies[BASELINE])
    added = (statistics.median(mine) - statistics.median(latencies[BASELINE])) * 1e6
    verdict = "met" if layer <= 1.10 else "NOT met"
    print(
        f"target: toolbridge's layer <= 1.10x the session it wraps: {verdict} ({layer:.3f}x, {added:+.1f} us)"
    )
    own = client_cpu[LAYER] - client_cpu[BASELINE]
    verdict = "met" if own <= OWN_CPU_GOAL else "NOT met"
    print(
        f"target: toolbridge's own CPU <= {OWN_CPU_GOAL * 1e6:g} us per call: {verdict} ({own * 1e6:+.1f} us)"
    )
    bare = client_cpu[LAYER] / client_cpu["bare ClientSession"]
    verdict = "met" if bare <= 1.10 else "NOT met"
    print(f"target: CPU per call <= 1.10x a bare ClientSession's: {verdict} ({bare:.3f}x)")
    if walls:
        verdict = "met" if walls[LAYER] <= CONCURRENT_GOAL else "NOT met"
        print(
            f"target: {concurrent} x 100 ms concurrently well under 1 s (<= {CONCURRENT_GOAL:g} s): "
            f"{verdict} ({walls[LAYER]:.3f} s)"
        )


async def main(calls: int, concurrent: int) -> None:
    print(f"{calls} sequential calls to echo per side\n")
    for title, (script, http) in SERVERS.items():
        print(f"== {title}")
        await measure(script, calls, concurrent if script == BASIC else None, http=http)
        print()
    print(
        '(over stdio the "bare ..." sides run their own server process, so on a busy machine they differ '
        'by process luck too; "SDK, same session" isolates the layer)'
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrent", type=int, default=20)
    options = parser.parse_args()
    anyio.run(main, options.calls, options.concurrent)
