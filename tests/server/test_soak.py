"""Soak: three `toolbridge serve` replicas on one PostgreSQL, 50 chats at a time on each, for a bounded
time, against a scripted model. Half the chats go through `/v1/chat/completions`, half through the page's
chat API (create a chat, open its event stream, post a message, read until `final`). Every chat asks for
a tool call and then answers, so each one writes messages and a call log row.

It asserts no errors, and prints per replica the chats done, p50/p99 latency and how much its memory
(VmRSS) grew from after a warm-up to the end. TOOLBRIDGE_SOAK_SECONDS runs it longer (default 10 s).
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import anyio
import httpx
import openai
import pytest
from replicas import Replica, start_replicas

from toolbridge.store import percentile
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

SOAK_SECONDS = float(os.environ.get("TOOLBRIDGE_SOAK_SECONDS", "10"))
CHATS_PER_REPLICA = 50
ANSWER = "The answer is in the tool result."
REQUEST_TIMEOUT = 60.0
MAX_STEPS = 60
"""Far beyond any run of calls a chat gets by chance (see `Script`); the default 10 is not."""
AGENTS = {"default": {"max_steps": MAX_STEPS}}


def rss_kib(pid: int) -> int:
    """The process's resident memory (VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


class Script:
    """Turns for chats whose number is not known in advance: each chat adds a call turn and an answer
    turn before it asks. Replies go in arrival order, so a chat may get another's turn, but every call
    turn precedes its answer: every chat ends on an answer and the script is used up exactly. A chat
    gets a run of calls about as often as coin tosses come up heads in a row, so the agent may take
    `MAX_STEPS` of them; the calls' expressions all differ, so no chat repeats a call (which would stop
    its run)."""

    def __init__(self, model: ScriptedModelServer) -> None:
        self._model = model
        self._numbers = itertools.count()

    def one_chat(self) -> None:
        call = ToolCallSpec("calculate", {"expression": f"{next(self._numbers)} + 1"})
        self._model.add(Turn.tool_calls(call), Turn.text(ANSWER))


@dataclass
class ReplicaLoad:
    replica: Replica
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    rss_start: int = 0
    rss_end: int = 0

    def report(self) -> str:
        done = sorted(self.latencies)
        p50, p99 = percentile(done, 0.5) * 1000, percentile(done, 0.99) * 1000
        growth = (self.rss_end - self.rss_start) / 1024
        return (
            f"replica {self.replica.name}: {len(done)} chats, {len(self.errors)} errors, "
            f"p50 {p50:.0f} ms, p99 {p99:.0f} ms, RSS {self.rss_start / 1024:.0f} -> "
            f"{self.rss_end / 1024:.0f} MiB ({growth:+.1f} MiB)"
        )


async def through_openai(client: openai.AsyncOpenAI) -> str:
    answer = await client.chat.completions.create(
        model="default", messages=[{"role": "user", "content": "What is the number?"}]
    )
    return answer.choices[0].message.content or ""


async def through_chat_api(client: httpx.AsyncClient) -> str:
    created = await client.post("/api/chats", json={})
    created.raise_for_status()
    chat = created.json()["id"]
    async with client.stream("GET", f"/api/chats/{chat}/events") as events:
        lines = events.aiter_lines()
        assert await anext(lines) == ": connected"
        posted = await client.post(f"/api/chats/{chat}/messages", json={"content": "What is the number?"})
        posted.raise_for_status()
        async for line in lines:
            if not line.startswith("data: "):
                continue
            event = json.loads(line.removeprefix("data: "))
            if event["type"] == "run_error":
                return f"run_error: {event['message']}"
            if event["type"] == "final":
                output: str = event["result"]["output"]
                return output
    return "the event stream ended before `final`"


async def keep_asking(
    load: ReplicaLoad, ask: Callable[[], Awaitable[str]], script: Script, deadline: float
) -> None:
    """One chat after another until the deadline (at least one); each one's latency, or its error."""
    while True:
        script.one_chat()
        started = time.perf_counter()
        try:
            answer = await ask()
        except (httpx.HTTPError, openai.OpenAIError) as error:
            load.errors.append(f"{type(error).__name__}: {error}")
        else:
            if answer == ANSWER:
                load.latencies.append(time.perf_counter() - started)
            else:
                load.errors.append(f"unexpected answer {answer!r}")
        if time.monotonic() >= deadline:
            return


async def soak(loads: list[ReplicaLoad], script: Script, seconds: float, chats_each: int) -> None:
    """`chats_each` chats at a time on each replica, half of them over each API, until `seconds` have
    passed (0: one chat each); then waits for the chats still going."""
    # The clients are entered first, so they close after the task group has waited for every chat.
    async with AsyncExitStack() as clients, anyio.create_task_group() as chats:
        deadline = time.monotonic() + seconds
        for load in loads:
            base = load.replica.base_url
            sdk = openai.AsyncOpenAI(
                base_url=f"{base}/v1", api_key="unused", max_retries=0, timeout=REQUEST_TIMEOUT
            )
            await clients.enter_async_context(sdk)
            limits = httpx.Limits(max_connections=2 * chats_each)
            http = await clients.enter_async_context(
                httpx.AsyncClient(base_url=base, timeout=REQUEST_TIMEOUT, limits=limits)
            )
            for number in range(chats_each):
                ask = partial(through_openai, sdk) if number % 2 else partial(through_chat_api, http)
                chats.start_soon(keep_asking, load, ask, script, deadline)


def test_three_replicas_fifty_chats_each_without_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ScriptedModelServer() as model:
        with start_replicas(tmp_path, model, count=3, agents=AGENTS) as fleet:
            script = Script(model)
            loads = [ReplicaLoad(replica) for replica in fleet]
            anyio.run(soak, loads, script, 0.0, 2)  # warm up (a chat over each API): imports, connections
            for load in loads:
                load.latencies.clear()
                load.rss_start = rss_kib(load.replica.pid)
            anyio.run(soak, loads, script, SOAK_SECONDS, CHATS_PER_REPLICA)
            for load in loads:
                load.rss_end = rss_kib(load.replica.pid)
        with capsys.disabled():
            print(f"\nsoak: 3 replicas x {CHATS_PER_REPLICA} concurrent chats for {SOAK_SECONDS:g} s")
            for load in loads:
                print("  " + load.report())
        errors = [f"{load.replica.name}: {error}" for load in loads for error in load.errors]
        assert not errors, "\n".join(errors[:20])
        assert all(load.latencies for load in loads), "a replica finished no chat"
