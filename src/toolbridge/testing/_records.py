"""What the scripted model saw and did, and the lock-guarded state shared with the server thread.

Timestamps are `time.monotonic()` seconds, so tests can compare them with their own.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ._script import Turn

__all__ = ["RecordedRequest", "ReplyRecord", "ScriptState"]


@dataclass
class ReplyRecord:
    """How the server answered one request. Updated live while a reply streams."""

    status: int = 200
    streamed: bool = False
    started_at: float | None = None
    """When the response started (for a stream: the headers went out)."""
    ended_at: float | None = None
    chunks_total: int = 0
    """SSE `data:` events the turn would send, `[DONE]` included."""
    chunks_sent: int = 0
    """Events handed to the connection before the reply ended."""
    client_disconnected: bool = False
    """The client closed the connection before the whole reply was sent."""
    chunk_sent_at: list[float] = field(default_factory=list)
    segment_ended_at: list[float | None] = field(default_factory=list)
    """Per scripted segment, when its last chunk was sent (None if it never was)."""

    @property
    def finished(self) -> bool:
        return self.ended_at is not None

    @property
    def completed(self) -> bool:
        """Everything scripted was sent."""
        return self.finished and self.chunks_sent == self.chunks_total


@dataclass
class RecordedRequest:
    """One `POST /v1/chat/completions` the server received, with the reply it got."""

    number: int
    """1-based position among all chat-completions requests."""
    body: dict[str, Any]
    received_at: float
    turn_number: int | None
    """The 1-based turn that answered it; None when the script had no turn left."""
    reply: ReplyRecord = field(default_factory=ReplyRecord)
    expectation_error: BaseException | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def last_message(self) -> dict[str, Any]:
        messages = self.messages
        return messages[-1] if messages else {}

    @property
    def tools(self) -> list[dict[str, Any]]:
        return list(self.body.get("tools") or [])

    @property
    def tool_names(self) -> list[str]:
        return [tool.get("function", {}).get("name", "") for tool in self.tools]

    @property
    def tool_choice(self) -> Any:
        return self.body.get("tool_choice")

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def include_usage(self) -> bool:
        options = self.body.get("stream_options") or {}
        return bool(options.get("include_usage"))


class ScriptState:
    """The remaining turns and the records, behind one condition so tests can wait on any change."""

    def __init__(self, turns: Iterable[Turn]) -> None:
        self._changed = threading.Condition()
        self._pending: deque[Turn] = deque(turns)
        self._total_turns = len(self._pending)
        self._requests: list[RecordedRequest] = []

    def add(self, turns: Iterable[Turn]) -> None:
        with self.changing():
            for turn in turns:
                self._pending.append(turn)
                self._total_turns += 1

    def receive(self, body: dict[str, Any], received_at: float) -> tuple[RecordedRequest, Turn | None]:
        """Record a request and hand it the next turn, if any."""
        with self.changing():
            turn = self._pending.popleft() if self._pending else None
            consumed = self._total_turns - len(self._pending)
            record = RecordedRequest(
                number=len(self._requests) + 1,
                body=body,
                received_at=received_at,
                turn_number=consumed if turn is not None else None,
            )
            self._requests.append(record)
            return record, turn

    @contextmanager
    def changing(self) -> Iterator[None]:
        """Mutate records inside this block; waiters are woken when it ends."""
        with self._changed:
            yield
            self._changed.notify_all()

    def wait_until(self, predicate: Callable[[], bool], timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._changed:
            return list(self._requests)

    def unconsumed(self) -> list[tuple[int, Turn]]:
        """The turns no request took, with their 1-based numbers."""
        with self._changed:
            first = self._total_turns - len(self._pending) + 1
            return list(enumerate(self._pending, start=first))
