"""What `toolbridge gateway` adds per tool call, next to calling the upstream server directly.

Run by hand: .venv/bin/python bench/gateway.py [--calls 1000] [--transport stdio|http]
With `TOOLBRIDGE_BENCH_PROFILE=OUT` the gateway runs under cProfile and leaves `OUT.<pid>.prof` (`_profiled`).

The upstream is tests/servers/basic.py (the SDK's own server). Two transports, each in the same run:
- stdio: the SDK's `Client` starts the upstream itself (direct), or starts `toolbridge gateway`, which
  starts the upstream over stdio (through the gateway);
- streamable HTTP: the upstream serves HTTP on 127.0.0.1; the `Client` calls its URL (direct), or the
  URL of `toolbridge gateway --http`, which calls the upstream's URL (through the gateway).
Both sides are the SDK's `Client` in its default mode, calling `echo` (near-free) and `sleep` for
10 ms (a tool that does some work). Latency is the median and p95 of sequential calls, measured in
alternating rounds so drift on a busy machine hits both sides alike, with the CPU time the serving
processes spent per call (Linux /proc: the upstream, plus the gateway on its side), which a busy machine
does not skew. The ratio is through-the-gateway over direct, from this same run; the goal is under 1.3x. A gateway is a second hop (one more SDK server
and client on the way), so on `echo` the ratio shows that hop whole; work in the tool hides it.
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

from _common import child_pids, free_port, in_alternating_rounds, listening, p95

HERE = Path(__file__).resolve().parent
BASIC = HERE.parent / "tests" / "servers" / "basic.py"
ROUNDS = 4
WARM_UP = 50
GOAL = 1.3
WORK_MS = 10
"""What `sleep` takes: a tool that does some work, as most do."""
DIRECT, GATEWAY = "direct", "through the gateway"
PROFILE_ENV_VAR = "TOOLBRIDGE_BENCH_PROFILE"

Call = Callable[[], Coroutine[Any, Any, object]]


def gateway_config(directory: Path, upstream: dict[str, Any]) -> list[str]:
    """The `toolbridge gateway` arguments for a config holding `upstream` alone."""
    config = directory / "toolbridge.json"
    config.write_text(json.dumps({"mcpServers": {"basic": upstream}}), encoding="utf-8")
    return ["gateway", "--no-native", "--config", str(config), "--db", str(directory / "calls.db")]


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


async def open_sides(stack: AsyncExitStack, directory: Path, *, http: bool) -> dict[str, Side]:
    """Calls directly and through the gateway, connected and listed once, with their server processes."""
    basic = [sys.executable, str(BASIC)]
    known = child_pids()
    if http:
        upstream_port, gateway_port = free_port(), free_port()
        upstream_command = [*basic, "--transport", "http", "--port", str(upstream_port)]
        upstream_url = f"http://127.0.0.1:{upstream_port}"
        upstream_pid = stack.enter_context(listening(upstream_command, upstream_port))
        upstream = {"type": "http", "url": f"{upstream_url}/mcp"}
        arguments = [*gateway_config(directory, upstream), "--http", "--port", str(gateway_port)]
        gateway_url = f"http://127.0.0.1:{gateway_port}"
        gateway_pid = stack.enter_context(listening(toolbridge(*arguments), gateway_port))
        targets: dict[str, Any] = {DIRECT: f"{upstream_url}/mcp", GATEWAY: f"{gateway_url}/mcp"}
        pids = {DIRECT: [upstream_pid], GATEWAY: [gateway_pid, upstream_pid]}
        known = child_pids()
    else:
        upstream_entry = {"command": basic[0], "args": basic[1:]}
        gateway = toolbridge(*gateway_config(directory, upstream_entry))
        env = dict(os.environ)  # the SDK passes a child only a few variables; toolbridge may need PYTHONPATH
        targets = {
            DIRECT: StdioServerParameters(command=basic[0], args=basic[1:], env=env),
            GATEWAY: StdioServerParameters(command=gateway[0], args=gateway[1:], env=env),
        }
        pids = {}
    sides: dict[str, Side] = {}
    for side, target in targets.items():
        client = await stack.enter_async_context(Client(target))
        await client.list_tools()
        started = child_pids() - known  # over stdio, the process this client started (the gateway's
        known |= started  # upstream is its child, counted with it)
        sides[side] = Side(_calls(client), pids.get(side, sorted(started)))
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
                    await timed_calls(side.calls[tool], WARM_UP)
                timers = {name: partial(timed_calls, side.calls[tool]) for name, side in sides.items()}
                pids = {name: side.server_pids for name, side in sides.items()}
                latencies, cpu_per_call = await in_alternating_rounds(timers, pids, calls, ROUNDS)
                report(tool, latencies, cpu_per_call)


def report(tool: str, latencies: dict[str, list[float]], cpu_per_call: dict[str, float]) -> None:
    print(f"{tool:22} {'median us':>10} {'p95 us':>10} {'server CPU us':>14}")
    for side, values in latencies.items():
        median, tail = statistics.median(values) * 1e6, p95(values) * 1e6
        print(f"  {side:20} {median:10.1f} {tail:10.1f} {cpu_per_call[side] * 1e6:14.1f}")
    ratio = statistics.median(latencies[GATEWAY]) / statistics.median(latencies[DIRECT])
    tail = p95(latencies[GATEWAY]) / p95(latencies[DIRECT])
    added = (statistics.median(latencies[GATEWAY]) - statistics.median(latencies[DIRECT])) * 1e6
    cpu_ratio = cpu_per_call[GATEWAY] / cpu_per_call[DIRECT] if cpu_per_call[DIRECT] else float("nan")
    verdict = "met" if ratio < GOAL else "NOT met"
    print(
        f"  ratio gateway / direct: median {ratio:.3f} (p95 {tail:.3f}, server CPU {cpu_ratio:.3f}), {added:+.1f} us"
    )
    print(f"  goal under {GOAL}x: {verdict}")


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
