"""What the pass-through endpoint costs a request: a client's streamed chat completion with `tools`,
through `toolbridge serve` to the upstream model, against the same request sent to the upstream directly.

Run by hand: .venv/bin/python bench/serve.py --passthrough [--streams 50] [--rounds 4]
[--tool-mode native|prompt] [--token-delay SECONDS] [--profile FILE [--profile-run paced]]

The upstream is the scripted model (the real OpenAI wire over HTTP) in a process of its own. Every reply
streams a short text and one call of the client's tool (about 25 chunks): natively (`delta.tool_calls`),
or in prompt mode as Hermes markup in the text, which serve reads into `tool_calls`.

`--streams` requests run at once, `--rounds` times, direct and through serve taking turns round by round
(so a noisy neighbour on the machine slows both alike). Each line gives the latency per request and the
CPU time serve and the upstream spent per request. Two runs, each with a ratio of the mean latency
through serve to the direct one:

1. Flat out: the upstream sends its chunks as fast as it can. An upstream that does nothing and a client
   on the same cores make this ratio serve's raw CPU against theirs, so it is the one that shows what
   serve costs (watch its CPU per request), not what a user sees.
2. Paced (the goal, under 1.2x): the upstream waits `--token-delay` (default 20 ms) before each chunk, as
   a real model streams tokens at 50 concurrent streams. This is what a client of a real model feels, so
   the goal is judged here.

`--profile FILE` profiles serve during the flat-out run's measured rounds (not its start-up), or the
paced run's with `--profile-run paced`: with yappi installed, the CPU time of every thread (the store's
lookups run in worker threads); else cProfile, the event loop's thread only. Read it with
`python -m pstats FILE`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import openai

import serving
from serve import Measurement, _cpu_seconds, timed_concurrently
from serving import TOOLBRIDGE
from toolbridge.store import percentile
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

GOAL = 1.2
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
                "required": ["city"],
            },
        },
    }
]
QUESTION = [{"role": "user", "content": "What's the weather in Paris?"}]
CALL_ARGUMENTS = {"city": "Paris", "days": 3}
PREAMBLE = "Let me look up the current weather in Paris for you. "


def reply(tool_mode: str, token_delay: float) -> Turn:
    call = ToolCallSpec("get_weather", CALL_ARGUMENTS)
    if tool_mode == "prompt":
        return Turn.calls_in_text(call, before=PREAMBLE, delay=token_delay).with_usage(120, 30)
    text = Turn.text(PREAMBLE, delay=token_delay)
    return text.then_tool_calls(call, chunk_size=4, delay=token_delay).with_usage(120, 30)


def serve_profiled(path: str, arguments: list[str]) -> None:
    """`--profiled-serve`: `toolbridge serve` with a profiler on between SIGUSR1 and SIGUSR2, which
    writes its stats to `path`."""
    import cProfile

    try:
        import yappi  # type: ignore[import-not-found]
    except ImportError:
        yappi = None
    else:
        yappi.set_clock_type("cpu")
    profiler = cProfile.Profile()

    def start(*_: object) -> None:
        if yappi is None:
            profiler.enable()
        else:
            yappi.start(builtins=True, profile_threads=True)

    def dump(*_: object) -> None:
        if yappi is None:
            profiler.disable()
            profiler.dump_stats(f"{path}.partial")
        else:
            yappi.stop()
            yappi.get_func_stats().save(f"{path}.partial", type="pstat")
        os.replace(f"{path}.partial", path)  # whole, for the bench waiting on it

    from toolbridge.cli import main as toolbridge

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, dump)
    sys.argv = ["toolbridge", *arguments]
    toolbridge()


def serve_model(turns: int, tool_mode: str, token_delay: float) -> None:
    """`--model-process`: serve `turns` replies, print the base URL, and stop when stdin closes."""
    with ScriptedModelServer([reply(tool_mode, token_delay)] * turns) as model:
        print(model.base_url, flush=True)
        sys.stdin.read()


def start_model_process(turns: int, tool_mode: str, token_delay: float) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, __file__, "--model-process", str(turns), tool_mode, str(token_delay)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def start_server(
    model_url: str, tool_mode: str, directory: Path, profile: Path | None
) -> tuple[subprocess.Popen[bytes], int]:
    upstream = {
        "provider": "openai",
        "model": "scripted-model",
        "base_url": model_url,
        "api_key": "bench",
        "max_retries": 0,
        "tool_mode": tool_mode,
    }
    launcher = TOOLBRIDGE if profile is None else (sys.executable, __file__, "--profiled-serve", str(profile))
    config = {"models": {"upstream": upstream}}
    return serving.start_server(config, directory, f"sqlite:///{directory / 'bench.db'}", launcher=launcher)


def asker(client: openai.AsyncOpenAI, model: str, *, expect_call: bool) -> Callable[[], Awaitable[None]]:
    """One streamed request with the client's tools, read to its end as a client does: the text and the
    calls' argument fragments put together."""

    async def ask() -> None:
        chunks = await client.chat.completions.create(
            model=model,
            messages=QUESTION,  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
        text: list[str] = []
        arguments: list[str] = []
        async for chunk in chunks:
            for choice in chunk.choices:
                text.append(choice.delta.content or "")
                for piece in choice.delta.tool_calls or []:
                    arguments.append(piece.function.arguments or "" if piece.function else "")
        if expect_call:
            assert json.loads("".join(arguments)) == CALL_ARGUMENTS, (text, arguments)

    return ask


async def measure(
    direct: Callable[[], Awaitable[None]],
    served: Callable[[], Awaitable[None]],
    *,
    streams: int,
    rounds: int,
    server_pid: int,
    model_pid: int,
    profile: Path | None,
) -> tuple[Measurement, Measurement, dict[str, float]]:
    """Both measurements, and the upstream's CPU seconds in each (with `profile`, serve's profile of the
    measured rounds is written there)."""
    await timed_concurrently(streams, direct)  # warm up: connections, imports
    await timed_concurrently(streams, served)
    if profile is not None:
        os.kill(server_pid, signal.SIGUSR1)
    results = {"direct": Measurement(0.0, [], []), "served": Measurement(0.0, [], [])}
    upstream_cpu = {"direct": 0.0, "served": 0.0}
    for _ in range(rounds):
        for name, ask in (("direct", direct), ("served", served)):
            cpu_before, model_cpu_before = _cpu_seconds(server_pid), _cpu_seconds(model_pid)
            wall, latencies = await timed_concurrently(streams, ask)
            measured = results[name]
            measured.wall += wall
            measured.latencies += latencies
            measured.cpu += _cpu_seconds(server_pid) - cpu_before
            upstream_cpu[name] += _cpu_seconds(model_pid) - model_cpu_before
    if profile is not None:
        os.kill(server_pid, signal.SIGUSR2)
        await wait_for_file(profile)
    for measured in results.values():
        measured.latencies.sort()
    return results["direct"], results["served"], upstream_cpu


async def wait_for_file(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not await anyio.Path(path).exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"serve wrote no profile to {path}")
        await anyio.sleep(0.05)  # polling for the file


def report(label: str, measured: Measurement, upstream_cpu: float) -> None:
    latencies = measured.latencies
    mean = sum(latencies) / len(latencies) * 1000
    p50, p99 = percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000
    line = f"  {label:<42} mean {mean:6.1f} ms  p50 {p50:6.1f} ms  p99 {p99:6.1f} ms"
    line += f"  {len(latencies) / measured.wall:6.1f} req/s"
    line += f"  | CPU per request: serve {measured.cpu / len(latencies) * 1000:.2f} ms"
    print(line + f", upstream {upstream_cpu / len(latencies) * 1000:.2f} ms")


async def run_once(
    streams: int, rounds: int, tool_mode: str, token_delay: float, profile: Path | None
) -> float:
    """One measurement at one pace, reported; the ratio of the latency through serve to the direct one."""
    turns = (rounds + 1) * streams * 2
    model, model_url = start_model_process(turns, tool_mode, token_delay)
    try:
        with tempfile.TemporaryDirectory() as directory:
            server, port = start_server(model_url, tool_mode, Path(directory), profile)
            to_model = openai.AsyncOpenAI(base_url=model_url, api_key="bench", max_retries=0, timeout=60)
            to_serve = openai.AsyncOpenAI(
                base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=60
            )
            try:
                direct, served, upstream_cpu = await measure(
                    asker(to_model, "scripted-model", expect_call=tool_mode == "native"),
                    asker(to_serve, "upstream", expect_call=True),
                    streams=streams,
                    rounds=rounds,
                    server_pid=server.pid,
                    model_pid=model.pid,
                    profile=profile,
                )
            finally:
                await to_model.close()
                await to_serve.close()
                server.send_signal(signal.SIGTERM)
                server.wait(10)
    except BaseException:
        model.kill()  # the run failed: its error says why, not the half-used script
        model.wait()
        raise
    assert model.stdin is not None
    model.stdin.close()  # the model process checks that its script was used up exactly, and exits
    if model.wait(30) != 0:
        raise SystemExit("the scripted model's script was not followed (see above)")
    report("upstream directly", direct, upstream_cpu["direct"])
    report("through toolbridge serve (pass-through)", served, upstream_cpu["served"])
    return (sum(served.latencies) / len(served.latencies)) / (sum(direct.latencies) / len(direct.latencies))


async def main(
    streams: int, rounds: int, tool_mode: str, token_delay: float, profile: Path | None, profile_run: str
) -> None:
    print(
        f"pass-through: {streams} concurrent streams x {rounds} rounds; each a streamed reply of text and "
        f"one {tool_mode} call"
    )
    print("1. flat out (no delay between chunks: serve's raw CPU against an upstream that does nothing)")
    flat_out = await run_once(streams, rounds, tool_mode, 0.0, profile if profile_run == "flat-out" else None)
    print(f"  overhead: {flat_out:.2f}x the direct latency per request")
    print(f"2. paced ({token_delay * 1000:g} ms before each chunk, as a real model streams): the goal")
    paced = await run_once(
        streams, rounds, tool_mode, token_delay, profile if profile_run == "paced" else None
    )
    verdict = "met" if paced < GOAL else "NOT met"
    print(f"  overhead: {paced:.2f}x the direct latency per request (goal: under {GOAL}x): {verdict}")
    if profile is not None:
        print(f"serve's profile of the {profile_run} run: {profile} (python -m pstats {profile})")


def run(arguments: list[str]) -> None:
    """From bench/serve.py --passthrough, with the rest of its command line."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="bench/serve.py --passthrough",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tool-mode", choices=["native", "prompt"], default="native")
    parser.add_argument("--token-delay", type=float, default=0.02, help="the paced run's delay per chunk")
    parser.add_argument("--profile", type=Path, metavar="FILE", help="profile serve in one run (see below)")
    parser.add_argument("--profile-run", choices=["flat-out", "paced"], default="flat-out")
    parsed = parser.parse_args(arguments)
    anyio.run(
        main,
        parsed.streams,
        parsed.rounds,
        parsed.tool_mode,
        parsed.token_delay,
        parsed.profile,
        parsed.profile_run,
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--model-process"]:
        serve_model(int(sys.argv[2]), sys.argv[3], float(sys.argv[4]))
    elif sys.argv[1:2] == ["--profiled-serve"]:
        serve_profiled(sys.argv[2], sys.argv[3:])
    else:
        run(sys.argv[1:])
