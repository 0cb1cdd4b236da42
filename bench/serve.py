"""Requests per second and latency of `/v1/chat/completions` under 50 concurrent chats, against the same
loop run in-process.

Run by hand: .venv/bin/python bench/serve.py [--chats 50] [--rounds 4] [--stream]

With `--passthrough`: the overhead of the pass-through endpoint (a client's own tools) against calling
the upstream model directly, at 50 concurrent streams (see bench/serve_passthrough.py).

With `--replicas 3`: the throughput of 3 replicas on one PostgreSQL against 1 replica on the same
database, in the same run, the chats spread over the replicas (see bench/serve_replicas.py).

The scripted model runs in a process of its own (this script with `--model-process`), so that neither
the server nor the in-process loop shares a CPU core (and the GIL) with it.

Each chat asks one question; the scripted model (real OpenAI protocol over HTTP, no delays) answers the
first request of a chat with a native `calculate` call and the next with the answer, so every chat is
two model requests and one tool call. Requests reach the model in whatever order they arrive, so the
script holds one call turn and one answer turn per chat: whichever chat gets which, every chat ends
with an answer and the work per round is the same.

1. Through `toolbridge serve` (a real process, SQLite tool-call log): the official async `openai`
   client sends `--chats` requests at once, `--rounds` times.
2. In-process: the same agent and model run `--chats` concurrent `Agent.run()`s, with no HTTP in front.
"""

from __future__ import annotations

import argparse
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import openai

from serving import start_server
from toolbridge.agent import Agent, AgentDefinition
from toolbridge.models import OpenAIChatModel
from toolbridge.store import percentile
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn
from toolbridge.tools import ToolRegistry, native_tools


def round_script(round_number: int, chats: int) -> list[Turn]:
    # Distinct expressions: the result cache must not answer, and no chat may repeat a call.
    calls = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": f"{round_number} * 1000 + {chat}"}))
        for chat in range(chats)
    ]
    return calls + [Turn.text("The answer is in the tool result.") for _ in range(chats)]


SEQUENTIAL = 20
"""Chats asked one at a time after the concurrent rounds: latency without queueing."""


def full_script(chats: int, rounds: int) -> list[Turn]:
    """For each of the two measurements, in the order they run: a warm-up round, `rounds` rounds, then
    the sequential chats."""
    concurrent = [turn for number in range(-1, rounds) for turn in round_script(number, chats)]
    sequential = [turn for number in range(SEQUENTIAL) for turn in round_script(1000 + number, 1)]
    return (concurrent + sequential) * 2


def serve_model(chats: int, rounds: int) -> None:
    """`--model-process`: serve the whole script, print the base URL, and stop when stdin closes."""
    with ScriptedModelServer(full_script(chats, rounds)) as model:
        print(model.base_url, flush=True)
        sys.stdin.read()


def start_model_process(chats: int, rounds: int) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, __file__, "--model-process", "--chats", str(chats), "--rounds", str(rounds)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def stop_model_process(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.close()  # the model process checks that the script was used up exactly, and exits
    if process.wait(30) != 0:
        raise SystemExit("the scripted model's script was not followed (see above)")


def server_config(model_url: str) -> dict[str, Any]:
    return {
        "models": {
            "scripted": {
                "provider": "openai",
                "model": "scripted-model",
                "base_url": model_url,
                "api_key": "bench",
                "max_retries": 0,
                "tool_mode": "native",
            }
        },
        "default_model": "scripted",
        "server": {"tool_activity": True},
    }


async def timed_concurrently(chats: int, ask: object) -> tuple[float, list[float]]:
    """Run `ask()` `chats` times at once; the wall time and each call's latency."""
    latencies: list[float] = []

    async def one() -> None:
        started = time.perf_counter()
        await ask()  # type: ignore[operator]
        latencies.append(time.perf_counter() - started)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(chats):
            group.start_soon(one)
    return time.perf_counter() - started, latencies


async def through_servers(
    ports: list[int], server_pids: list[int], chats: int, rounds: int, stream: bool
) -> Measurement:
    """The chats through `toolbridge serve` processes, spread over them in turn."""
    clients = [
        openai.AsyncOpenAI(
            base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=60
        )
        for port in ports
    ]
    turns = itertools.cycle(clients)
    question = [{"role": "user", "content": "What is the number?"}]

    async def ask() -> None:
        client = next(turns)
        if stream:
            chunks = await client.chat.completions.create(model="default", messages=question, stream=True)  # type: ignore[arg-type]
            content = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
        else:
            completion = await client.chat.completions.create(model="default", messages=question)  # type: ignore[arg-type]
            content = completion.choices[0].message.content or ""
        assert content == "The answer is in the tool result.", content

    async def close() -> None:
        for client in clients:
            await client.close()

    return await _rounds(chats, rounds, ask, after=close, server_pids=server_pids)


async def in_process(model_url: str, chats: int, rounds: int) -> Measurement:
    adapter = OpenAIChatModel("bench", base_url=model_url, api_key="bench", max_retries=0, tool_mode="native")
    agent = Agent(adapter, ToolRegistry(native=native_tools()), AgentDefinition())

    async def ask() -> None:
        result = await agent.run("What is the number?")
        assert result.output == "The answer is in the tool result.", result.stop_detail

    return await _rounds(chats, rounds, ask, after=adapter.aclose, server_pids=[])


@dataclass
class Measurement:
    wall: float
    """Seconds for the concurrent rounds."""
    latencies: list[float]
    """Of every concurrent request, sorted."""
    sequential: list[float]
    """Of each chat asked alone, sorted."""
    cpu: float = 0.0
    """CPU seconds the server processes spent on the concurrent rounds (0: not measured)."""


async def _rounds(
    chats: int, rounds: int, ask: object, *, after: object, server_pids: list[int]
) -> Measurement:
    await timed_concurrently(chats, ask)  # warm up: connections, imports, the tool index
    cpu_before = sum(map(_cpu_seconds, server_pids))
    wall = 0.0
    latencies: list[float] = []
    for _ in range(rounds):
        elapsed, round_latencies = await timed_concurrently(chats, ask)
        wall += elapsed
        latencies += round_latencies
    cpu = sum(map(_cpu_seconds, server_pids)) - cpu_before
    sequential = []
    for _ in range(SEQUENTIAL):
        sequential += (await timed_concurrently(1, ask))[1]
    await after()  # type: ignore[operator]
    return Measurement(wall, sorted(latencies), sorted(sequential), cpu)


def _cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of a process, from /proc (Linux)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(label: str, measured: Measurement) -> None:
    latencies, alone = measured.latencies, measured.sequential
    p50, p99 = percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000
    line = f"  {label:<45} {len(latencies) / measured.wall:6.1f} req/s  p50 {p50:6.0f} ms  p99 {p99:6.0f} ms"
    line += f"  | alone: p50 {percentile(alone, 0.5) * 1000:5.1f} ms"
    if measured.cpu:
        line += f"  | server CPU {measured.cpu / len(latencies) * 1000:.1f} ms/req"
    print(line)


async def main(chats: int, rounds: int, stream: bool) -> None:
    model, model_url = start_model_process(chats, rounds)
    try:
        with tempfile.TemporaryDirectory() as directory:
            db_url = f"sqlite:///{Path(directory) / 'bench.db'}"
            server, port = start_server(server_config(model_url), Path(directory), db_url)
            try:
                served = await through_servers([port], [server.pid], chats, rounds, stream)
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(10)
        local = await in_process(model_url, chats, rounds)
    finally:
        stop_model_process(model)
    kind = "streamed" if stream else "non-streamed"
    print(f"{chats} concurrent chats x {rounds} rounds; each: 2 model requests + 1 native tool call ({kind})")
    report("POST /v1/chat/completions (toolbridge serve)", served)
    report("Agent.run() in-process (same loop and model)", local)


if __name__ == "__main__":
    if "--passthrough" in sys.argv:
        from serve_passthrough import run

        run([argument for argument in sys.argv[1:] if argument != "--passthrough"])
        raise SystemExit
    if "--replicas" in sys.argv:
        from serve_replicas import run as run_replicas

        run_replicas(sys.argv[1:])
        raise SystemExit
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--stream", action="store_true", help="Stream the answers (SSE) instead.")
    parser.add_argument("--model-process", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.model_process:
        serve_model(arguments.chats, arguments.rounds)
    else:
        anyio.run(main, arguments.chats, arguments.rounds, arguments.stream)
