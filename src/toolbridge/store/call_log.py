"""The call log: every call the pipeline ends, as a row (`CallLog`, an observer of `ToolPipeline`).

Rows are written after the caller has its answer, off the event loop. Running (`async with
log.running()`), they are written in batches (`toolbridge gateway`); otherwise each in a worker thread
as its call ends.

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
from typing import TYPE_CHECKING

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from toolbridge.store._errors import StoreError
from toolbridge.store._records import ToolCallLogEntry

if TYPE_CHECKING:
    from toolbridge.tools import CallRecord

__all__ = ["BackgroundCallLog", "CallLog", "CallLogWriter"]

CallLogWriter = Callable[[Sequence[ToolCallLogEntry]], None]
"""Writes a batch of calls to the call log, in one transaction; it runs in a worker thread."""

logger = logging.getLogger(__name__)

LINGER = 0.2
"""Seconds a batch waits for more calls before it is written: `toolbridge stats` lags by no more."""


class BackgroundCallLog:
    def __init__(self, write: CallLogWriter, *, linger: float = LINGER) -> None:
        self._write = write
        self._linger = linger
        self._queue: MemoryObjectSendStream[ToolCallLogEntry] | None = None

    @property
    def is_running(self) -> bool:
        return self._queue is not None

    def add(self, entry: ToolCallLogEntry) -> None:
        """Queue one entry (inside `running()`)."""
        assert self._queue is not None, "add() runs inside running()"
        self._queue.send_nowait(entry)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        send, receive = anyio.create_memory_object_stream[ToolCallLogEntry](math.inf)
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

    async def _write_all(
        self, receive: MemoryObjectReceiveStream[ToolCallLogEntry], closing: anyio.Event
    ) -> None:
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

    def _write_logged(self, batch: list[ToolCallLogEntry]) -> None:
        try:
            self._write(batch)
        except Exception:  # a database that cannot be written must not stop the calls (the store says so)
            logger.debug("could not write %d calls to the call log", len(batch), exc_info=True)


def _queued(receive: MemoryObjectReceiveStream[ToolCallLogEntry]) -> list[ToolCallLogEntry]:
    entries = []
    while True:
        try:
            entries.append(receive.receive_nowait())
        except (anyio.WouldBlock, anyio.EndOfStream):
            return entries


class CallLog(BackgroundCallLog):
    """Logs every call of the pipelines it observes, with its caller (`toolbridge.tools.CallContext`)."""

    def call_started(self, record: CallRecord) -> None:
        pass

    async def call_ended(self, record: CallRecord) -> None:
        if record.deferred:  # its next round is logged
            return
        entry = log_entry(record)
        if self.is_running:
            self.add(entry)
            return
        try:
            with anyio.CancelScope(shield=True):  # a cancelled call is logged as such
                await anyio.to_thread.run_sync(self._write, [entry])
        except StoreError as error:
            # The answer outweighs its record: the store reports itself degraded (`Store.health()`).
            logger.debug("not recorded: %s", error)


def log_entry(record: CallRecord) -> ToolCallLogEntry:
    """The call log's row of a call that ended."""
    result = record.result
    if result.server is None and record.tool is not None:
        result = result.model_copy(update={"server": record.tool.source})
    context = record.context
    entry = ToolCallLogEntry.from_result(
        record.call,
        result,
        started_at=record.started_at,
        chat_id=context.chat_id,
        caller=context.caller,
    )
    return entry.model_copy(update={"user_id": context.user_id}) if context.user_id is not None else entry
