"""Throughput of several `toolbridge serve` replicas on one PostgreSQL against one replica on the same
database, in the same run.

Run by hand: .venv/bin/python bench/serve.py --replicas 3 [--chats 50] [--rounds 4] [--stream]

The chats are bench/serve.py's (a native `calculate` call, then the answer; the scripted model in a
process of its own), sent `--chats` at a time, `--rounds` times, first to one replica, then spread in
turn over `--replicas` replicas; both on one fresh schema of the PostgreSQL database named by
$TOOLBRIDGE_BENCH_POSTGRES (default: the test database). The result is the ratio of their throughputs;
on a machine with fewer cores than replicas, expect the database and the cores, not toolbridge, to
bound it.
"""

from __future__ import annotations

import argparse
import signal
import tempfile
from pathlib import Path

import anyio

from serve import Measurement, report, server_config, start_model_process, stop_model_process, through_servers
from serving import postgres_schema, start_server


async def measure(
    model_url: str, db_url: str, directory: Path, replicas: int, chats: int, rounds: int, stream: bool
) -> Measurement:
    servers = [start_server(server_config(model_url), directory, db_url) for _ in range(replicas)]
    try:
        ports = [port for _, port in servers]
        return await through_servers(ports, [process.pid for process, _ in servers], chats, rounds, stream)
    finally:
        for process, _ in servers:
            process.send_signal(signal.SIGTERM)
            process.wait(10)


async def main(replicas: int, chats: int, rounds: int, stream: bool) -> None:
    model, model_url = start_model_process(chats, rounds)
    try:
        with tempfile.TemporaryDirectory() as directory, postgres_schema() as db_url:
            one = await measure(model_url, db_url, Path(directory), 1, chats, rounds, stream)
            several = await measure(model_url, db_url, Path(directory), replicas, chats, rounds, stream)
    finally:
        stop_model_process(model)
    kind = "streamed" if stream else "non-streamed"
    print(
        f"replicas on one PostgreSQL: {chats} concurrent chats x {rounds} rounds, spread over the replicas; "
        f"each: 2 model requests + 1 native tool call ({kind})"
    )
    report("1 replica", one)
    report(f"{replicas} replicas", several)
    ratio = (len(several.latencies) / several.wall) / (len(one.latencies) / one.wall)
    print(f"  throughput: {replicas} replicas give {ratio:.2f}x one replica's")


def run(arguments: list[str]) -> None:
    """From bench/serve.py --replicas N, with the rest of its command line."""
    parser = argparse.ArgumentParser(prog="bench/serve.py --replicas", description=__doc__)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--stream", action="store_true", help="Stream the answers (SSE) instead.")
    parsed = parser.parse_args(arguments)
    if parsed.replicas < 2:
        parser.error("--replicas must be at least 2 (it is compared with one replica)")
    anyio.run(main, parsed.replicas, parsed.chats, parsed.rounds, parsed.stream)
