"""What the Messages and Responses APIs cost against Chat Completions: the same pass-through (a streamed
reply of text and one call of the client's tool, in the model's prompt-mode text), asked through each of
`toolbridge serve`'s three endpoints with each API's official SDK.

Run: .venv/bin/python bench/serve_apis.py [--requests 60] [--concurrency 10] [--rounds 4] [--tool-mode prompt]

The upstream is the scripted model over the real OpenAI wire, in a process of its own, flat out. The
sides take turns round by round (a noisy neighbour slows all alike). Each line gives the mean latency per
request and the CPU serve spent per request; the ratios are each API against Chat Completions, from this
one run.
"""

from __future__ import annotations

import argparse
import signal
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anthropic
import anyio
import openai

from _common import in_alternating_rounds
from serve_passthrough import CALL_ARGUMENTS, QUESTION, TOOLS, start_model_process, start_server

TOOL = TOOLS[0]["function"]
ANTHROPIC_TOOL = {
    "name": TOOL["name"],
    "description": TOOL["description"],
    "input_schema": TOOL["parameters"],
}
RESPONSES_TOOL = {"type": "function", **TOOL}


def concurrently(
    ask: Callable[[], Awaitable[None]], concurrency: int
) -> Callable[[int], Awaitable[list[float]]]:
    async def time_calls(count: int) -> list[float]:
        latencies: list[float] = []

        async def one() -> None:
            started = time.perf_counter()
            await ask()
            latencies.append(time.perf_counter() - started)

        for start in range(0, count, concurrency):
            async with anyio.create_task_group() as group:
                for _ in range(min(concurrency, count - start)):
                    group.start_soon(one)
        return latencies

    return time_calls


def chat_completions(client: openai.AsyncOpenAI) -> Callable[[], Awaitable[None]]:
    async def ask() -> None:
        stream = await client.chat.completions.create(
            model="upstream", messages=QUESTION, tools=TOOLS, stream=True
        )  # type: ignore[arg-type]
        arguments = [piece.function.arguments or "" async for chunk in stream for choice in chunk.choices
                     for piece in choice.delta.tool_calls or [] if piece.function]  # fmt: skip
        assert "".join(arguments), "no call came back"

    return ask


def messages(client: anthropic.AsyncAnthropic) -> Callable[[], Awaitable[None]]:
    async def ask() -> None:
        async with client.messages.stream(
            model="upstream", max_tokens=256, messages=QUESTION, tools=[ANTHROPIC_TOOL]
        ) as stream:  # type: ignore[arg-type,list-item]
            message = await stream.get_final_message()
        assert any(block.type == "tool_use" and block.input == CALL_ARGUMENTS for block in message.content)

    return ask


def responses(client: openai.AsyncOpenAI) -> Callable[[], Awaitable[None]]:
    async def ask() -> None:
        async with client.responses.stream(
            model="upstream", input=QUESTION, tools=[RESPONSES_TOOL]
        ) as stream:  # type: ignore[arg-type,list-item]
            response = await stream.get_final_response()
        assert any(item.type == "function_call" for item in response.output)

    return ask


async def main(requests: int, concurrency: int, rounds: int, tool_mode: str) -> None:
    model, model_url = start_model_process(requests * 3 + 3, tool_mode, 0.0)
    try:
        with tempfile.TemporaryDirectory() as directory:
            server, port = start_server(model_url, tool_mode, Path(directory), None)
            url = f"http://127.0.0.1:{port}"
            to_openai = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0, timeout=60)
            to_anthropic = anthropic.AsyncAnthropic(base_url=url, api_key="unused", max_retries=0, timeout=60)
            sides: dict[str, Any] = {
                "chat completions": chat_completions(to_openai),
                "messages": messages(to_anthropic),
                "responses": responses(to_openai),
            }
            try:
                for ask in sides.values():
                    await ask()  # warm up: the first request of each API imports its SDK's types
                measured = await in_alternating_rounds(
                    {side: concurrently(ask, concurrency) for side, ask in sides.items()},
                    {side: [server.pid] for side in sides},
                    requests,
                    rounds,
                )
            finally:
                await to_openai.close()
                await to_anthropic.close()
                server.send_signal(signal.SIGTERM)
                server.wait(10)
    finally:
        model.kill()
        model.wait()
    print(f"{requests} streamed pass-through requests per API, {concurrency} at a time, {tool_mode} calls")
    base = measured.latencies["chat completions"]
    base_latency, base_cpu = sum(base) / len(base), measured.server_cpu["chat completions"]
    for side, latencies in measured.latencies.items():
        latency, cpu = sum(latencies) / len(latencies), measured.server_cpu[side]
        print(
            f"  {side:<17} {latency * 1000:7.1f} ms  serve CPU {cpu * 1000:6.2f} ms/request  "
            f"ratio latency {latency / base_latency:.2f}x  CPU {cpu / base_cpu:.2f}x"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tool-mode", choices=["native", "prompt"], default="prompt")
    options = parser.parse_args()
    anyio.run(main, options.requests, options.concurrency, options.rounds, options.tool_mode)
