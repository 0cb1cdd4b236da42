"""Writing a run down as it goes: each completed message into its chat, each finished call into the log.

`observe(event, transcript)` is called for every event of a run, with the messages the run has completed
so far; whatever is new is written (one worker-thread hop, each message its own transaction) before the
event goes on to clients, so a client that has seen an event can rely on what came before being stored.
`finish(result)` writes the rest: the answer, and the "did not run" results of a cancelled run.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import anyio

from toolbridge.agent import (
    AgentEvent,
    ApprovalDecidedEvent,
    RunResult,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
)
from toolbridge.store import Store, ToolCallLogEntry, ToolCallStatus
from toolbridge.types import Message, ToolCall, ToolMessage, ToolResult

__all__ = ["RunRecorder"]


class RunRecorder:
    """`chat_id` None: log the calls only (the OpenAI endpoint keeps no chats; its client has the history)."""

    def __init__(self, store: Store, *, chat_id: int | None, written: int) -> None:
        self._store = store
        self._chat_id = chat_id
        self._written = written
        """Messages of the transcript already in the store (the history and the prompt)."""
        self._calls: dict[str, tuple[ToolCall, datetime]] = {}
        self._declined: set[str] = set()
        self._finished: set[str] = set()

    async def observe(self, event: AgentEvent, transcript: Sequence[Message]) -> None:
        if isinstance(event, ToolCallStartedEvent):
            self._calls[event.call.id] = (event.call, datetime.now(UTC))
        elif isinstance(event, ApprovalDecidedEvent) and not event.approved:
            self._declined.add(event.call_id)
        elif isinstance(event, ToolCallFinishedEvent):
            self._finished.add(event.call_id)
        if len(transcript) > self._written:
            await self._write(list(transcript[self._written :]))

    async def finish(self, result: RunResult) -> None:
        # Shielded: a run cancelled by its client or by shutdown still gets written down.
        with anyio.CancelScope(shield=True):
            await self._write(result.messages[self._written :])

    async def _write(self, messages: list[Message]) -> None:
        self._written += len(messages)
        entries = [entry for m in messages if (entry := self._log_entry(m)) is not None]
        await anyio.to_thread.run_sync(self._commit, messages, entries)

    def _commit(self, messages: list[Message], entries: list[ToolCallLogEntry]) -> None:
        if self._chat_id is not None:
            for message in messages:
                self._store.append_message(self._chat_id, message)
        for entry in entries:
            self._store.log_tool_call(entry)

    def _log_entry(self, message: Message) -> ToolCallLogEntry | None:
        """A log entry for a tool result whose call was made (also declined); None for calls that never
        reached a tool (unreadable, cut off by a stop) and for every other message."""
        if not isinstance(message, ToolMessage) or message.result.call_id not in self._finished:
            return None
        call, started_at = self._calls[message.result.call_id]
        return ToolCallLogEntry.from_result(
            call,
            message.result,
            started_at=started_at,
            status=self._status(message.result),
            chat_id=self._chat_id,
        )

    def _status(self, result: ToolResult) -> ToolCallStatus:
        if result.call_id in self._declined:
            return "denied"
        if result.is_error and "timed out" in result.text:
            return "timeout"
        return "error" if result.is_error else "ok"
