"""What `toolbridge gateway` adds per tool call, next to calling the upstream server directly.

Run by hand: .venv/bin/python bench/gateway.py [--calls 1000] [--transport stdio|http]
With `TOOLBRIDGE_BENCH_PROFILE=OUT` the gateway runs under cProfile and leaves `OUT.<pid>.prof` (`_profiled`).

The upstream is tests/servers/basic.py (the SDK's own server). Two transports, each in the same run:
- stdio: the SDK's `Client` starts the upstream itself (direct), or starts `toolbridge gateway`, which
  starts the upstream over stdio (through the gateway);
- streamable HTTP: the upstream serves HTTP on 127.0.0.1; the `Client` calls its URL (direct), or the
  URL of `toolbridge gateway --http`, which calls the upstream's URL (through the gateway).
A third side is the least any gateway built on the SDK costs: `sdk_proxy.py`, a bare low-level SDK server
forwarding each call through the SDK's `Client`, in the gateway's place.

Every side is the SDK's `Client` in its default mode, calling `echo` (near-free) and `sleep` for 10 ms (a
tool that does some work). Latency is the median and p95 of sequential calls, measured in alternating
rounds so drift on a busy machine hits every side alike, with the CPU time the serving processes spent
per call (Linux /proc: the upstream, plus the proxy on its side), which a busy machine does not skew,
and the CPU time the proxy process alone spent per call: the gateway's own cost (toolbridge's call
pipeline, the SDK's server and client in it) next to the bare SDK proxy's.
The ratio is through-the-gateway over direct, from this same run; the goal is under 1.3x. A gateway is a
second hop (one more SDK server and client on the way), so on `echo` the ratio shows that hop whole, as
the bare proxy's ratio does; work in the tool hides it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from contextlib import AsyncExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mcp
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from _common import Measured, child_pids, free_port, in_alternating_rounds, listening, p95

HERE = Path(__file__).resolve().parent
BASIC = HERE.parent / "tests" / "servers" / "basic.py"
ROUNDS = 4
WARM_UP = 50
GOAL = 1.3
WORK_MS = 10
"""What `sleep` takes: a tool that does some work, as most do."""
DIRECT, GATEWAY, BARE = "direct", "through the gateway", "bare SDK proxy"
PROFILE_ENV_VAR = "TOOLBRIDGE_BENCH_PROFILE"

Call = Callable[[], Coroutine[Any, Any, object]]


def write_config(directory: Path, upstream: dict[str, Any]) -> Path:
    """A toolbridge config holding `upstream` alone (both proxies read it)."""
    config = directory / "toolbridge.json"
    config.write_text(json.dumps({"mcpServers": {"basic": upstream}}), encoding="utf-8")
    return config


def proxy_commands(
    directory: Path, upstream: dict[str, Any], http_port: dict[str, int] | None
) -> dict[str, list[str]]:
    """The gateway's command and the bare SDK proxy's, in front of `upstream`; over HTTP on these ports."""
    config = str(write_config(directory, upstream))
    gateway = toolbridge("gateway", "--no-native", "--config", config, "--db", str(directory / "calls.db"))
    bare = [sys.executable, str(HERE / "sdk_proxy.py"), "--config", config]
    commands = {GATEWAY: gateway, BARE: bare}
    if http_port is not None:
        for side, command in commands.items():
            command += ["--http", "--port", str(http_port[side])]
    return commands


def toolbridge(*args: str) -> list[str]:
    """The command running toolbridge; under cProfile when `$TOOLBRIDGE_BENCH_PROFILE` names where its
    profile goes (see `_profiled`)."""
    if profile := os.environ.get(PROFILE_ENV_VAR):
        return [sys.executable, str(HERE / "_profiled.py"), profile, *args]
    return [sys.executable, "-m", "toolbridge", *args]


@dataclass
class Side:
    calls: dict[str, Call]
    """By tool."""
    server_pids: list[int]
    """The processes serving this side's calls (with their children): the upstream, and the gateway."""
    proxy_pid: int | None
    """The gateway's or the bare proxy's process (None: direct)."""


async def open_sides(stack: AsyncExitStack, directory: Path, *, http: bool) -> dict[str, Side]:
    """Calls directly, through the gateway and through the bare SDK proxy, connected and listed once,
    with their server processes."""
    basic = [sys.executable, str(BASIC)]
    known = child_pids()
    targets: dict[str, Any]
    pids: dict[str, list[int]] = {}
    if http:
        upstream_port = free_port()
        upstream_command = [*basic, "--transport", "http", "--port", str(upstream_port)]
        upstream_url = f"http://127.0.0.1:{upstream_port}/mcp"
        upstream_pid = stack.enter_context(listening(upstream_command, upstream_port))
        targets, pids = {DIRECT: upstream_url}, {DIRECT: [upstream_pid]}
        ports = {GATEWAY: free_port(), BARE: free_port()}
        for side, command in proxy_commands(directory, {"type": "http", "url": upstream_url}, ports).items():
            pids[side] = [stack.enter_context(listening(command, ports[side])), upstream_pid]
            targets[side] = f"http://127.0.0.1:{ports[side]}/mcp"
        known = child_pids()
    else:
        env = dict(os.environ)  # the SDK passes a child only a few variables; toolbridge may need PYTHONPATH
        targets = {DIRECT: StdioServerParameters(command=basic[0], args=basic[1:], env=env)}
        upstream = {"command": basic[0], "args": basic[1:]}
        for side, command in proxy_commands(directory, upstream, None).items():
            targets[side] = StdioServerParameters(command=command[0], args=command[1:], env=env)
    sides: dict[str, Side] = {}
    for side, target in targets.items():
        client = await stack.enter_async_context(Client(target))
        await client.list_tools()
        started = child_pids() - known  # over stdio, the process this client started (a proxy's
        known |= started  # upstream is its child, counted with it)
        server_pids = pids.get(side, sorted(started))
        sides[side] = Side(_calls(client), server_pids, None if side == DIRECT else server_pids[0])
    return sides


def _calls(client: Client) -> dict[str, Call]:
    async def echo() -> object:
        return await _checked(client.call_tool("echo", {"text": "hello"}))

    async def sleep() -> object:
        return await _checked(client.call_tool("sleep", {"ms": WORK_MS}))

    return {"echo": echo, f"sleep {WORK_MS} ms": sleep}


async def _checked(call: Coroutine[Any, Any, mcp.CallToolResult]) -> object:
    result = await call
    assert not result.is_error, result.content
    return result


async def timed_calls(call: Call, count: int) -> list[float]:
    latencies = []
    for _ in range(count):
        started = time.perf_counter()
        await call()
        latencies.append(time.perf_counter() - started)
    return latencies


async def measure(calls: int, *, http: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="toolbridge-bench-") as directory:
        async with AsyncExitStack() as stack:
            sides = await open_sides(stack, Path(directory), http=http)
            for tool in sides[DIRECT].calls:
                for side in sides.values():
                    await timed_calls(side.calls[tool], min(WARM_UP, calls))
                timers = {name: partial(timed_calls, side.calls[tool]) for name, side in sides.items()}
                pids = {name: side.server_pids for name, side in sides.items()}
                proxies = {name: [side.proxy_pid] for name, side in sides.items()}
                measured = await in_alternating_rounds(timers, pids, calls, ROUNDS, proxies=proxies)
                report(tool, measured)


def report(tool: str, measured: Measured) -> None:
    latencies, cpu_per_call, proxy_cpu = measured.latencies, measured.server_cpu, measured.proxy_cpu
    print(f"{tool:22} {'median us':>10} {'p95 us':>10} {'server CPU us':>14} {'proxy CPU us':>13}")
    for side, values in latencies.items():
        median, tail = statistics.median(values) * 1e6, p95(values) * 1e6
        proxy = f"{proxy_cpu[side] * 1e6:13.1f}" if side != DIRECT else f"{'-':>13}"
        print(f"  {side:20} {median:10.1f} {tail:10.1f} {cpu_per_call[side] * 1e6:14.1f} {proxy}")
    ratio = _ratio_line(latencies, cpu_per_call, GATEWAY, DIRECT)
    print(f"  ratio gateway / direct: {ratio}")
    print(f"  ratio bare SDK proxy / direct: {_ratio_line(latencies, cpu_per_call, BARE, DIRECT)}")
    print(f"  ratio gateway / bare SDK proxy: {_ratio_line(latencies, cpu_per_call, GATEWAY, BARE)}")
    own = proxy_cpu[GATEWAY] / proxy_cpu[BARE] if proxy_cpu[BARE] else float("nan")
    added = (proxy_cpu[GATEWAY] - proxy_cpu[BARE]) * 1e6
    print(f"  proxy CPU gateway / bare SDK proxy: {own:.3f}, {added:+.1f} us per call")
    met = statistics.median(latencies[GATEWAY]) / statistics.median(latencies[DIRECT]) < GOAL
    print(f"  goal under {GOAL}x: {'met' if met else 'NOT met'}")


def _ratio_line(
    latencies: dict[str, list[float]], cpu_per_call: dict[str, float], side: str, base: str
) -> str:
    ratio = statistics.median(latencies[side]) / statistics.median(latencies[base])
    tail = p95(latencies[side]) / p95(latencies[base])
    added = (statistics.median(latencies[side]) - statistics.median(latencies[base])) * 1e6
    cpu = cpu_per_call[side] / cpu_per_call[base] if cpu_per_call[base] else float("nan")
    return f"median {ratio:.3f} (p95 {tail:.3f}, server CPU {cpu:.3f}), {added:+.1f} us"


async def main(calls: int, transports: list[str]) -> None:
    print(f"{calls} sequential calls per tool and side; upstream {BASIC.name} (the SDK's own server)\n")
    for title, http in (("stdio", False), ("streamable HTTP", True)):
        if ("http" if http else "stdio") not in transports:
            continue
        print(f"== {title}")
        await measure(calls, http=http)
        print()


if __name__ == "__main__":
    os.environ.pop("TOOLBRIDGE_TOKEN", None)  # the gateway listens on 127.0.0.1: no token needed
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--transport", choices=["stdio", "http"], action="append", help="default: both")
    options = parser.parse_args()
    anyio.run(main, options.calls, options.transport or ["stdio", "http"])
