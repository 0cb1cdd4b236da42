"""What the call benchmarks share: their server processes, the CPU time those spend (Linux /proc), and
timing sides against each other in alternating rounds, so drift on a busy machine hits every side alike.

Imported by the scripts beside it (`python bench/x.py` puts this folder on the path)."""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

TimeCalls = Callable[[int], Awaitable[list[float]]]
"""Make this many calls one after another; the latency of each, in seconds."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def listening(command: list[str], port: int) -> Iterator[int]:
    """Run `command` until the block ends; yields its process id once `port` accepts connections."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:  # polling for readiness, before anything is timed
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None:
                    raise RuntimeError(f"{' '.join(command)} did not start") from None
                time.sleep(0.05)
        yield process.pid
    finally:
        process.terminate()
        process.wait()


def child_pids(pid: int | str = "self") -> set[int]:
    """A process's child processes, from /proc; empty where there is none."""
    pids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children = task / "children"
        if children.exists():
            pids.update(int(child) for child in children.read_text().split())
    return pids


def cpu_seconds(pids: Sequence[int | None], *, children: bool = True) -> float:
    """User + system CPU time of these processes and (unless `children` is False) their children
    (toolbridge starts a stdio server through a shell that waits for it) so far; 0 for a None and where
    /proc cannot tell."""
    total = 0.0
    for pid in pids:
        if pid is None:
            continue
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if children:
            total += cpu_seconds(sorted(child_pids(pid)))
    return total


@dataclass
class Measured:
    latencies: dict[str, list[float]]
    """Each side's call latencies, in seconds."""
    server_cpu: dict[str, float]
    """CPU seconds per call its server processes spent, with their children."""
    client_cpu: dict[str, float]
    """CPU seconds per call this process (the client making the calls) spent."""
    proxy_cpu: dict[str, float]
    """CPU seconds per call its proxy processes spent, without their children (the upstream)."""


async def in_alternating_rounds(
    sides: Mapping[str, TimeCalls],
    servers: Mapping[str, Sequence[int | None]],
    calls: int,
    rounds: int,
    *,
    proxies: Mapping[str, Sequence[int | None]] | None = None,
) -> Measured:
    """`calls` calls per side, `calls // rounds` at a time, side after side: each side's latencies, and
    the CPU time per call its `servers` (process ids), its `proxies` alone and this process spent."""
    latencies: dict[str, list[float]] = {side: [] for side in sides}
    proxies = proxies or {}
    server_cpu, client_cpu, proxy_cpu = (
        dict.fromkeys(sides, 0.0),
        dict.fromkeys(sides, 0.0),
        dict.fromkeys(sides, 0.0),
    )
    for _ in range(rounds):
        for side, time_calls in sides.items():
            server_before = cpu_seconds(servers[side])
            proxy_before = cpu_seconds(proxies.get(side, ()), children=False)
            client_before = time.process_time()
            latencies[side] += await time_calls(calls // rounds)
            client_cpu[side] += time.process_time() - client_before
            server_cpu[side] += cpu_seconds(servers[side]) - server_before
            proxy_cpu[side] += cpu_seconds(proxies.get(side, ()), children=False) - proxy_before

    def per_call(cpu: dict[str, float]) -> dict[str, float]:
        return {side: seconds / len(latencies[side]) for side, seconds in cpu.items()}

    return Measured(latencies, per_call(server_cpu), per_call(client_cpu), per_call(proxy_cpu))


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]
