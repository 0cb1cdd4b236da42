"""Calls lost to a server closing idle connections: many calls over streamable HTTP, paced around the
server's keep-alive, so connections are taken from the pool just as the server closes them.

Run by hand: .venv/bin/python bench/http_keepalive.py [--calls 1000] [--concurrent 16] [--keep-alive 0.2]

tests/servers/basic.py (the SDK's server under uvicorn) runs with a short keep-alive, and toolbridge's
client keeps idle connections 4/5 of it: uvicorn's 5 s against toolbridge's 4 s, scaled down so the race
comes often without hours of waiting. Each of `--concurrent` workers calls `sleep` (0 ms; not annotated
safe to retry, so toolbridge never resends it and a lost call shows) and then waits between a half and
one and a half server keep-alives, so many connections taken from the pool are near the server's close.
A lost call is one answered "the connection was lost ... may or may not have run"; 0 is expected.
`--client-keep-alive` sets toolbridge's otherwise.

Measured on 2 busy cores (load 7), 1000 calls: before the fix (client keep-alive equal to the server's,
no check of pooled connections) 2-3 lost at 0.2 s, 55-59 at 0.05 s; after it 0 at 0.2 s. Scaled down
further the margin shrinks with it (10 ms at 0.05 s vs 0.04 s, 1 s for real) and a busy machine's
event-loop lag outlasts it: 10-16 lost. Those are closes that crossed the request on the wire, where it
is unknown whether the call ran: reported, never retried.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import anyio
import httpx2

import toolbridge._http_client as http_client
from _common import free_port, listening
from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection

BASIC = Path(__file__).resolve().parent.parent / "tests" / "servers" / "basic.py"


async def main(calls: int, concurrent: int, keep_alive: float, client_keep_alive: float) -> int:
    http_client._LIMITS = httpx2.Limits(  # toolbridge's 4 s against uvicorn's 5 s, scaled down alike
        max_connections=100, max_keepalive_connections=20, keepalive_expiry=client_keep_alive
    )
    port = free_port()
    command = [sys.executable, str(BASIC), "--transport", "http", "--port", str(port)]
    with listening([*command, "--keep-alive", str(keep_alive)], port):
        config = ServerConfig(
            name="basic", transport="streamable-http", url=f"http://127.0.0.1:{port}/mcp", timeout=30
        )
        lost: list[str] = []
        other: list[str] = []
        remaining = iter(range(calls))
        started = time.perf_counter()
        async with ServerConnection(config) as server:

            async def worker(rng: random.Random) -> None:
                for number in remaining:
                    result = await server.call_tool("sleep", {"ms": 0}, call_id=f"c{number}")
                    if "may or may not have run" in result.text:
                        lost.append(result.text)
                    elif result.is_error or result.text != "slept 0 ms":
                        other.append(result.text)
                    await anyio.sleep(keep_alive * rng.uniform(0.5, 1.5))

            async with anyio.create_task_group() as workers:
                for seed in range(concurrent):
                    workers.start_soon(worker, random.Random(seed))
        wall = time.perf_counter() - started
    print(
        f"{calls} calls, {concurrent} at a time, over streamable HTTP to a server keeping idle connections "
        f"{keep_alive:g} s (toolbridge {client_keep_alive:g} s), pauses of {keep_alive / 2:g}-{keep_alive * 1.5:g} s ({wall:.1f} s)"
    )
    print(f"lost calls: {len(lost)} (0 expected)")
    for text in lost[:3]:
        print(f"  {text}")
    print(f"other failures: {len(other)}")
    for text in other[:3]:
        print(f"  {text}")
    return 1 if lost or other else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--concurrent", type=int, default=16)
    parser.add_argument("--keep-alive", type=float, default=0.2, help="the server's, in seconds")
    parser.add_argument(
        "--client-keep-alive", type=float, help="toolbridge's, in seconds (default: 4/5 of the server's)"
    )
    options = parser.parse_args()
    client_keep_alive = options.client_keep_alive or options.keep_alive * 0.8
    sys.exit(anyio.run(main, options.calls, options.concurrent, options.keep_alive, client_keep_alive))
