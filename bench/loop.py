"""How fast the agent loop turns, and how soon a tool starts once the model has written its call.

Run by hand: .venv/bin/python bench/loop.py [--steps 50] [--latency-runs 5]

1. Steps per second: a script where every reply calls a native async tool (`noop`), N steps, then an
   answer (a sync tool adds a worker-thread hop, about 0.3 ms).
   Measured twice: with the scripted model over real HTTP through the `openai` client (zero latency in
   the script, so the cost is client + server + loop), and with an in-process replay model (the loop
   and the parser alone).
2. Cost of a step as the transcript grows: client CPU (this thread's; the scripted server runs in
   another) and wall time of one request at step 1 and at step 100, for the OpenAI and the Anthropic
   adapter, printed with their ratio (goal: within 1.5x). Earlier messages are the same objects on
   every step, as in a run; only the newest call and result are new.
3. Call-to-tool latency: a prompt-mode reply writes a call, then 500 more tokens at 100 tokens/s (seed
   002's "(waiting for the tool result...)"). Time from the server sending the call's last chunk to the
   tool starting: with the loop (it closes the stream at the first text after the call), against
   reading the whole stream first and parsing it, as a naive client does.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio

from toolbridge.agent import Agent, AgentDefinition
from toolbridge.models import (
    AnthropicModel,
    Model,
    ModelEvent,
    ModelRequest,
    OpenAIChatModel,
    TextDelta,
    ToolCallDelta,
)
from toolbridge.models.base import Finish
from toolbridge.parsing import parse
from toolbridge.testing import ScriptedAnthropicServer, ScriptedModelServer, ToolCallSpec, Turn
from toolbridge.tools import FunctionTool, ToolRegistry
from toolbridge.types import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
)

FILLER_TOKENS = 500
FILLER_DELAY = 0.01  # 100 tokens/s


async def noop(n: int) -> int:
    """Return n.

    Args:
        n: Any number.
    """
    return n


class ReplayModel(Model):
    """Replies from memory: a native call per step (distinct arguments), then an answer. No I/O."""

    name = "replay"
    tool_mode = "native"

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.requests = 0

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        self.requests += 1
        return self._stream(self.requests)

    @asynccontextmanager
    async def _stream(self, number: int) -> AsyncIterator[AsyncIterator[ModelEvent]]:
        async def events() -> AsyncIterator[ModelEvent]:
            if number <= self.steps:
                yield ToolCallDelta(index=0, id=f"call_{number}", name="noop", arguments=f'{{"n": {number}}}')
                yield Finish("tool_calls")
            else:
                yield TextDelta("done")
                yield Finish("stop")

        yield events()


def agent_for(model: Model, steps: int) -> Agent:
    registry = ToolRegistry(native=[FunctionTool.from_function(noop)])
    return Agent(model, registry, AgentDefinition(max_steps=steps + 1))


async def steps_per_second_http(steps: int) -> float:
    script = [Turn.tool_calls(ToolCallSpec("noop", {"n": n})) for n in range(steps)] + [Turn.text("done")]
    async with ScriptedModelServer(script) as server:
        model = OpenAIChatModel(
            "bench", base_url=server.base_url, api_key="x", max_retries=0, tool_mode="native"
        )
        started = time.perf_counter()
        result = await agent_for(model, steps).run("go")
        elapsed = time.perf_counter() - started
        await model.aclose()
    assert result.stop_reason == "final_answer", result.stop_detail
    return result.steps / elapsed


async def steps_per_second_in_process(steps: int) -> float:
    started = time.perf_counter()
    result = await agent_for(ReplayModel(steps), steps).run("go")
    elapsed = time.perf_counter() - started
    assert result.stop_reason == "final_answer", result.stop_detail
    return result.steps / elapsed


def transcript(steps: int) -> list[Message]:
    """A run's messages after `steps` native calls, each with a result of a few hundred characters."""
    messages: list[Message] = [UserMessage(content="Count to a hundred with the noop tool.")]
    for n in range(steps):
        messages += step_messages(n)
    return messages


def step_messages(n: int) -> list[Message]:
    call = ToolCall(name="noop", arguments={"n": n}, id=f"call_{n}")
    result = ToolResult(call_id=call.id, content=[TextPart(text=f"{n}: " + "lorem ipsum dolor sit " * 12)])
    return [AssistantMessage(tool_calls=[call]), ToolMessage(name="noop", result=result)]


NOOP_SPEC = FunctionTool.from_function(noop).spec


async def request_cost(model: Model, earlier: list[Message], step: int) -> tuple[float, float]:
    """Client CPU and wall seconds of the request of step `step`, after the `earlier` messages."""
    request = ModelRequest(messages=[*earlier, *step_messages(step)], tools=[NOOP_SPEC])
    started_cpu, started = time.thread_time(), time.perf_counter()
    async with model.stream(request) as events:
        async for _ in events:
            pass
    return time.thread_time() - started_cpu, time.perf_counter() - started


async def step_cost_growth(adapter: str, far: int = 100, repeats: int = 30) -> None:
    """The request at step 1 against the one at step `far`, alternated so load drifts hit both."""
    script = [Turn.tool_calls(ToolCallSpec("noop", {"n": 1}))] * (2 * repeats + 1)
    scripted = ScriptedAnthropicServer(script) if adapter == "anthropic" else ScriptedModelServer(script)
    near_messages, far_messages = transcript(0), transcript(far - 1)
    near, distant = [], []
    async with scripted as server:
        model: Model
        if adapter == "anthropic":
            model = AnthropicModel("bench", base_url=server.base_url, api_key="x", max_retries=0)
        else:
            model = OpenAIChatModel("bench", base_url=server.base_url, api_key="x", max_retries=0)
        await request_cost(model, near_messages, 0)  # warm up imports and the connection
        for _ in range(repeats):
            near.append(await request_cost(model, near_messages, 0))
            distant.append(await request_cost(model, far_messages, far - 1))
        await model.aclose()
    near_cpu, far_cpu = (statistics.median(cost[0] for cost in costs) for costs in (near, distant))
    near_wall, far_wall = (statistics.median(cost[1] for cost in costs) for costs in (near, distant))
    print(
        f"  {adapter:9}: client CPU {near_cpu * 1000:6.2f} ms -> {far_cpu * 1000:6.2f} ms "
        f"(ratio {far_cpu / near_cpu:4.2f}); wall {near_wall * 1000:6.2f} ms -> {far_wall * 1000:6.2f} ms "
        f"(ratio {far_wall / near_wall:4.2f})"
    )


def call_then_filler() -> Turn:
    call = ToolCallSpec("mark", {})
    return Turn.calls_in_text(call).then_tokens(
        FILLER_TOKENS, token=" (waiting for the tool result...)", delay=FILLER_DELAY
    )


async def loop_call_to_tool() -> float:
    """Seconds from the call's last chunk leaving the server to the tool starting, through the loop."""
    started_at: list[float] = []

    def mark() -> str:
        """Record when the tool started."""
        started_at.append(time.monotonic())
        return "marked"

    async with ScriptedModelServer([call_then_filler(), Turn.text("ok")]) as server:
        model = OpenAIChatModel(
            "bench", base_url=server.base_url, api_key="x", max_retries=0, tool_mode="prompt"
        )
        registry = ToolRegistry(native=[FunctionTool.from_function(mark)])
        await Agent(model, registry).run("go")
        await model.aclose()
        call_sent = server.replies[0].segment_ended_at[0]
    assert call_sent is not None
    return started_at[0] - call_sent


async def naive_call_to_tool() -> float:
    """The same, reading the whole stream before looking for calls."""
    async with ScriptedModelServer([call_then_filler()]) as server:
        model = OpenAIChatModel(
            "bench", base_url=server.base_url, api_key="x", max_retries=0, tool_mode="prompt"
        )
        text = []
        async with model.stream(ModelRequest(messages=[])) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    text.append(event.text)
        [call] = parse("".join(text)).tool_calls
        tool_started = time.monotonic()
        await model.aclose()
        call_sent = server.replies[0].segment_ended_at[0]
    assert call.name == "mark"
    assert call_sent is not None
    return tool_started - call_sent


async def main(steps: int, latency_runs: int) -> None:
    await steps_per_second_in_process(10)  # warm up imports and caches
    http = statistics.median([await steps_per_second_http(steps) for _ in range(3)])
    in_process = statistics.median([await steps_per_second_in_process(steps) for _ in range(3)])
    print(f"loop steps per second ({steps} steps, a native tool per step)")
    print(f"  scripted model over HTTP + openai client : {http:8.0f} steps/s  ({1000 / http:.2f} ms/step)")
    print(
        f"  in-process replay model (loop alone)     : {in_process:8.0f} steps/s  ({1000 / in_process:.3f} ms/step)"
    )

    print("one request at step 1 -> step 100 (goal: ratio within 1.5)")
    await step_cost_growth("openai")
    await step_cost_growth("anthropic")

    early = [await loop_call_to_tool() for _ in range(latency_runs)]
    naive = await naive_call_to_tool()
    print(
        f"call end -> tool start ({FILLER_TOKENS} tokens at {1 / FILLER_DELAY:.0f} tokens/s after the call)"
    )
    print(
        f"  the loop (closes the stream after the call): {statistics.median(early) * 1000:8.1f} ms (median of {latency_runs})"
    )
    print(f"  waiting for the end of the stream          : {naive * 1000:8.1f} ms")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--latency-runs", type=int, default=5)
    arguments = parser.parse_args()
    anyio.run(main, arguments.steps, arguments.latency_runs)
