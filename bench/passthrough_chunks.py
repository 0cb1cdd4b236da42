"""The pass-through's CPU per streamed text chunk, with the wire taken out: what looking for leaked call
markup in a native-mode reply adds to each chunk. Precise on a busy machine, where the CPU per request
of `bench/serve.py --passthrough` moves by more than this from run to run.

Run by hand: .venv/bin/python bench/passthrough_chunks.py [--chunks 4000] [--rounds 15]

A pass-through request (`PassThrough.stream`, each chunk JSON-encoded as serve sends it) over a model
that answers at once with prose and no markup, in model-sized chunks. Sides, timed in alternating
rounds, the fastest round counting (interference only ever adds time):

- without tools: the text is not looked at (no tools, no calls to find);
- with tools: the same reply, looked through for leaked markup (`calls_from_text`).

For each chunking (word-sized tokens as models stream them, and the 4-character pieces of the scripted
model the serve bench uses) it prints the CPU per chunk of each side, the scan's share and the ratio.
For a before and after, run it on both checkouts (`PYTHONPATH=<old>/src`), alternating.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

from toolbridge.models import Finish, Model, ModelEvent, ModelRequest, TextDelta, tool_calling_model
from toolbridge.models.base import event_stream
from toolbridge.server.openai.passthrough import PassThrough
from toolbridge.server.openai.wire import CompletionIds
from toolbridge.types import ToolSpec, UserMessage

PROSE = (
    "Let me look up the current weather in Paris for you. It should be mild at this time of year, "
    "with some clouds in the morning and sunshine after noon; the forecast for the weekend is dry. "
)
WEATHER = ToolSpec(
    name="get_weather",
    input_schema={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
WARM_UP = 3


def word_chunks(text: str) -> list[str]:
    """As models stream: a token per chunk, most of them a word with the space before it."""
    return re.findall(r" ?[^ ]+| +", text)


def fixed_chunks(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


class AtOnce(Model):
    """Answers every request with `events` at once, as a model whose chunks are all there."""

    name = "at-once"
    tool_mode = "native"

    def __init__(self, events: list[ModelEvent]) -> None:
        self.events = events

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        async def events() -> AsyncGenerator[ModelEvent]:
            for event in self.events:
                yield event

        return event_stream(events())


def one_request(model: Model, tools: tuple[ToolSpec, ...]) -> Callable[[], Any]:
    async def run() -> None:
        sent: list[bytes] = []

        async def send(data: dict[str, Any]) -> None:
            sent.append(json.dumps(data).encode())

        request = ModelRequest(messages=[UserMessage(content="Weather?")], tools=tools)
        reply = PassThrough(tool_calling_model(model), request, CompletionIds("m"), repair_retries=0)
        await reply.stream(send, include_usage=False)

    return run


async def fastest_per_chunk(
    sides: dict[str, Callable[[], Any]], chunks: int, rounds: int
) -> dict[str, float]:
    for run in sides.values():
        for _ in range(WARM_UP):
            await run()
    fastest = dict.fromkeys(sides, float("inf"))
    for _ in range(rounds):
        for side, run in sides.items():
            started = time.process_time()
            await run()
            fastest[side] = min(fastest[side], (time.process_time() - started) / chunks)
    return fastest


async def main(chunks: int, rounds: int) -> None:
    text = PROSE * (chunks // len(word_chunks(PROSE)) + 1)
    print(f"CPU per text chunk of a pass-through request, fastest of {rounds} rounds of {chunks} chunks\n")
    for label, split in (("word-sized chunks", word_chunks), ("4-character chunks", fixed_chunks)):
        pieces = split(text)[:chunks]
        model = AtOnce([*(TextDelta(piece) for piece in pieces), Finish("stop")])
        sides = {"without tools": one_request(model, ()), "with tools": one_request(model, (WEATHER,))}
        fastest = await fastest_per_chunk(sides, len(pieces), rounds)
        plain, scanned = fastest["without tools"], fastest["with tools"]
        print(
            f"{label:20} without tools {plain * 1e6:5.2f} us  with tools {scanned * 1e6:5.2f} us  "
            f"scan {(scanned - plain) * 1e6:+5.2f} us ({scanned / plain:.3f}x)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args()
    anyio.run(main, options.chunks, options.rounds)
