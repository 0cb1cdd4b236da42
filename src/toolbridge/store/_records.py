"""The values the store hands out and takes in. Neutral messages stay `toolbridge.types.Message`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, computed_field

from toolbridge.agent.definition import AgentDefinition
from toolbridge.tools.cache import argument_hash
from toolbridge.types import Message, ToolCall, ToolResult

__all__ = [
    "AgentRecord",
    "ChatSummary",
    "StoredMessage",
    "ToolCallLogEntry",
    "ToolCallStatus",
    "ToolStats",
]

ToolCallStatus = Literal["ok", "error", "denied", "timeout"]


class _Record(BaseModel):
    """Records are plain frozen values; `model_dump(mode="json")` is their JSON for the HTTP API."""

    model_config = ConfigDict(frozen=True)


class AgentRecord(_Record):
    definition: AgentDefinition
    created_at: datetime
    updated_at: datetime

    @computed_field  # type: ignore[prop-decorator]
    @property
    def name(self) -> str:
        return self.definition.name


class ChatSummary(_Record):
    id: int
    title: str
    """The given title, else the start of the first user message, else empty."""
    agent: str | None
    message_count: int
    created_at: datetime
    updated_at: datetime


class StoredMessage(_Record):
    """A message as stored: the neutral message plus where and when."""

    chat_id: int
    position: int
    created_at: datetime
    message: Message


class ToolCallLogEntry(_Record):
    """One tool call for the statistics log. `from_result` fills it from the call and what came of it."""

    tool: str
    server: str
    call_id: str
    argument_hash: str
    started_at: datetime
    duration: float
    status: ToolCallStatus
    error: str | None = None
    cache_hit: bool = False
    chat_id: int | None = None

    @classmethod
    def from_result(
        cls,
        call: ToolCall,
        result: ToolResult,
        *,
        started_at: datetime,
        status: ToolCallStatus | None = None,
        chat_id: int | None = None,
    ) -> ToolCallLogEntry:
        """`status` defaults to `error` for an error result, else `ok`; pass `denied` or `timeout` when
        the caller knows that is what happened. An error's text is the result's text. The argument hash
        is the result cache's key (`toolbridge.tools.cache.argument_hash`)."""
        status = status or ("error" if result.is_error else "ok")
        return cls(
            tool=call.name,
            server=result.server or "",
            call_id=call.id,
            argument_hash=argument_hash(call.arguments),
            started_at=started_at,
            duration=result.duration,
            status=status,
            error=result.text if status != "ok" else None,
            cache_hit=result.cached,
            chat_id=chat_id,
        )


class ToolStats(_Record):
    """Figures for one tool on one server. Latencies are in seconds."""

    tool: str
    server: str
    calls: int
    succeeded: int
    cache_hits: int
    p50: float
    p95: float
    last_called: datetime
    last_error: str | None
    last_error_at: datetime | None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def success_rate(self) -> float:
        return self.succeeded / self.calls if self.calls else 0.0
