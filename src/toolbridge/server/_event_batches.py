"""Server-sent events written in batches: every event that is ready when the writer gets its turn goes
out in one write.

A producer (a run, a pass-through) hands events over without waiting; the writer, a task of its own,
runs as soon as the producer waits for anything (the model's next bytes, mostly) and sends all it was
handed as one body part. So an event that comes alone goes out at once, and the dozen an upstream read
brought go out together: one pass through the ASGI stack and one socket write instead of a dozen (a
write per chunk was a fifth of what the pass-through cost the server when its model streamed fast).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anyio
from starlette.types import Send

__all__ = ["EventBatches"]

_MAX_WAITING = 256
"""Events handed over and not yet written, past which the producer waits for the writer (a client
that reads slowly holds the producer back instead of piling its events up in memory)."""

# Made once: `json.dumps` with options makes an encoder per call.
_encode_json = json.JSONEncoder(ensure_ascii=False).encode


class EventBatches:
    """One response's events. `run()` is the writer (in a task); `add()` hands an event over; `close()`
    ends the body once everything handed over is written. The status line and `headers` go out with the
    first event, so until then the response can still be answered otherwise (an error's own status)."""

    def __init__(self, send: Send, headers: Sequence[tuple[bytes, bytes]]) -> None:
        self._send = send
        self._headers: list[tuple[bytes, bytes]] | None = list(headers)
        """Until the status line is sent."""
        self._waiting: list[bytes] = []
        self._ready = anyio.Event()
        self._room: anyio.Event | None = None
        """Made only while the producer waits for room: an event per batch cost more than the batch."""
        self._closed = False
        self._written = anyio.Event()

    async def add(self, data: dict[str, Any], *, event: str | None = None) -> None:
        """Hand `data` over as one `data:` event, named `event` if given (Anthropic's streams name each);
        waits only while too many are not yet written."""
        named = b"event: " + event.encode() + b"\n" if event else b""
        self._waiting.append(named + b"data: " + _encode_json(data).encode() + b"\n\n")
        self._ready.set()
        if len(self._waiting) >= _MAX_WAITING:
            if self._room is None:
                self._room = anyio.Event()
            await self._room.wait()

    async def close(self, *, done: bool = True) -> None:
        """Write `data: [DONE]` (OpenAI's end of stream; `done=False`: none) after everything handed over,
        and end the body; returns once `run()` has."""
        if done:
            self._waiting.append(b"data: [DONE]\n\n")
        self._closed = True
        self._ready.set()
        await self._written.wait()

    async def run(self) -> None:
        """Write what is handed over, a batch at a time, until closed."""
        while True:
            await self._ready.wait()
            self._ready = anyio.Event()
            batch, self._waiting = self._waiting, []
            closing = self._closed
            if self._headers is not None:
                start = {"type": "http.response.start", "status": 200, "headers": self._headers}
                self._headers = None
                await self._send(start)
            await self._send(
                {"type": "http.response.body", "body": b"".join(batch), "more_body": not closing}
            )
            if self._room is not None:
                self._room.set()
                self._room = None
            if closing:
                self._written.set()
                return
