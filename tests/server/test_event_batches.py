"""Streamed responses write the events that are ready together in one body part, and never hold back an
event that comes alone (server/_event_batches.py, behind every streamed `/v1/chat/completions`)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from toolbridge.server._event_batches import _MAX_WAITING, EventBatches

pytestmark = pytest.mark.anyio

HEADERS = [(b"content-type", b"text/event-stream; charset=utf-8")]


class RecordingSend:
    """The ASGI `send` of a server, keeping every message; `gate`, when given, holds up body parts."""

    def __init__(self, gate: anyio.Event | None = None) -> None:
        self.messages: list[dict[str, Any]] = []
        self.gate = gate
        self.body_sent = anyio.Event()

    async def __call__(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and self.gate is not None:
            await self.gate.wait()
        self.messages.append(message)
        if message["type"] == "http.response.body":
            self.body_sent.set()
            self.body_sent = anyio.Event()

    @property
    def bodies(self) -> list[bytes]:
        return [message["body"] for message in self.messages if message["type"] == "http.response.body"]


def events_in(body: bytes) -> list[Any]:
    data = [line.removeprefix(b"data: ") for line in body.split(b"\n\n") if line]
    return [part.decode() if part == b"[DONE]" else json.loads(part) for part in data]


async def test_events_ready_together_go_out_in_one_write_after_the_status_line() -> None:
    send = RecordingSend()
    events = EventBatches(send, HEADERS)
    async with anyio.create_task_group() as group:
        group.start_soon(events.run)
        for number in range(12):
            await events.add({"n": number, "text": "é"})
        await events.close()

    assert send.messages[0] == {"type": "http.response.start", "status": 200, "headers": HEADERS}
    [body] = send.bodies
    assert events_in(body) == [{"n": n, "text": "é"} for n in range(12)] + ["[DONE]"]
    assert send.messages[-1]["more_body"] is False


async def test_an_event_that_comes_alone_goes_out_before_the_next_is_ready() -> None:
    send = RecordingSend()
    events = EventBatches(send, HEADERS)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(events.run)
            first_written = send.body_sent
            await events.add({"n": 1})
            await first_written.wait()  # would never return if the lone event were held back
            await events.add({"n": 2})
            await events.close()

    assert [events_in(body) for body in send.bodies] == [[{"n": 1}], [{"n": 2}, "[DONE]"]]
    assert [message["more_body"] for message in send.messages[1:]] == [True, False]


async def test_a_client_that_reads_slowly_holds_the_producer_back() -> None:
    gate = anyio.Event()
    send = RecordingSend(gate)
    events = EventBatches(send, HEADERS)
    total = _MAX_WAITING + 10
    handed_over = 0

    async def produce() -> None:
        nonlocal handed_over
        for number in range(total):
            await events.add({"n": number})
            handed_over += 1
        await events.close()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(events.run)
            group.start_soon(produce)
            await anyio.wait_all_tasks_blocked()
            # Nothing written yet, and the producer waits instead of handing over all it has.
            assert send.bodies == []
            assert handed_over < _MAX_WAITING
            gate.set()

    written = [event for body in send.bodies for event in events_in(body)]
    assert written == [{"n": n} for n in range(total)] + ["[DONE]"]
