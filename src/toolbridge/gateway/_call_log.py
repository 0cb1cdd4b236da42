"""The gateway's call log, written after the client has its answer, off the event loop, in batches.

A database write per call (a transaction and its commit) costs more than the call itself on a fast
server, and its worker thread takes the interpreter's lock from the event loop serving the next call.
Entries therefore queue up; one task waits `linger` seconds after the first of a batch, then writes all
that arrived meanwhile in one transaction in a worker thread. Leaving `running()` writes what is left
at once, so a gateway that has stopped has logged every call it answered.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from toolbridge.types import ToolCall, ToolResult

__all__ = ["BackgroundCallLog", "CallLogWriter", "LoggedCall"]

LoggedCall = tuple[ToolCall, ToolResult, datetime]
"""A call the gateway ran, its result, and when it started."""

CallLogWriter = Callable[[Sequence[LoggedCall]], None]
"""Writes a batch of calls to the call log, in one transaction; it runs in a worker thread."""

logger = logging.getLogger(__name__)

LINGER = 0.2
"""Seconds a batch waits for more calls before it is written: `toolbridge stats` lags by no more."""


class BackgroundCallLog:
    def __init__(self, write: CallLogWriter, *, linger: float = LINGER) -> None:
        self._write = write
        self._linger = linger
        self._queue: MemoryObjectSendStream[LoggedCall] | None = None

    def __call__(self, call: ToolCall, result: ToolResult, started_at: datetime) -> None:
        """Log one call (the gateway's `CallRecorder`)."""
        if self._queue is None:  # not running (a gateway driven directly): written at once
            self._write([(call, result, started_at)])
            return
        self._queue.send_nowait((call, result, started_at))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        send, receive = anyio.create_memory_object_stream[LoggedCall](math.inf)
        closing = anyio.Event()
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(self._write_all, receive, closing)
            self._queue = send
            try:
                yield
            finally:
                self._queue = None
                closing.set()  # no more lingering: what is queued is written now
                send.close()  # the writer finishes what is queued, then ends

    async def _write_all(self, receive: MemoryObjectReceiveStream[LoggedCall], closing: anyio.Event) -> None:
        async with receive:
            async for entry in receive:
                try:
                    with anyio.move_on_after(self._linger):
                        await closing.wait()
                finally:
                    batch = [entry, *_queued(receive)]
                    # Shielded: entries taken from the queue are written even while shutting down.
                    with anyio.CancelScope(shield=True):
                        await anyio.to_thread.run_sync(self._write_logged, batch)

    def _write_logged(self, batch: list[LoggedCall]) -> None:
        try:
            self._write(batch)
        except Exception:  # a database that cannot be written must not stop the gateway (the store says so)
            logger.debug("could not write %d calls to the call log", len(batch), exc_info=True)


def _queued(receive: MemoryObjectReceiveStream[LoggedCall]) -> list[LoggedCall]:
    entries = []
    while True:
        try:
            entries.append(receive.receive_nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            return entries
