"""The values the store hands out and takes in. Neutral messages stay `toolbridge.types.Message`."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from toolbridge.config.agents import AgentDefinition
from toolbridge.types import Caller, Message, ToolCall, ToolErrorKind, ToolResult

__all__ = [
    "AgentRecord",
    "ChatSummary",
    "StoreHealth",
    "StoredMessage",
    "ToolCallLogEntry",
    "ToolCallStatus",
    "ToolCaller",
    "ToolStats",
]

ToolCallStatus = Literal["ok", "error", "denied", "cancelled"]
"""How a logged call ended: `ok`; `error` (it failed: `error_kind` says how); `denied` (the user declined
it, or nobody could be asked, so it never ran); `cancelled` (the run was stopped while it ran)."""


ToolCaller = Caller
"""Who made a logged call (`toolbridge.types.Caller`)."""


class _Record(BaseModel):
    """Records are plain frozen values; `model_dump(mode="json")` is their JSON for the HTTP API."""

    model_config = ConfigDict(frozen=True)


class AgentRecord(_Record):
    definition: AgentDefinition
    created_at: datetime
    updated_at: datetime
    problem: str | None = None
    """Why the stored definition cannot be used (then `definition` carries only the name)."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def name(self) -> str:
        return self.definition.name


class StoreHealth(_Record):
    """`degraded`: the last write failed (disk full, read-only database); nothing is being recorded."""

    state: Literal["ok", "degraded"]
    error: str | None = None
    since: datetime | None = None
    """When writes started failing."""


class ChatSummary(_Record):
    id: int
    title: str
    """The given title, else the start of the first user message, else empty."""
    agent: str | None
    message_count: int
    created_at: datetime
    updated_at: datetime
    user_id: int | None = None
    """The user whose chat it is; None without users."""
    model: str | None = None
    """The model the chat's runs use; None: its agent's."""
    answered_by: str | None = None
    """The model that wrote the chat's latest answer (None before the first, or if not recorded)."""


class StoredMessage(_Record):
    """A message as stored: the neutral message plus where and when."""

    chat_id: int
    position: int
    created_at: datetime
    message: Message
    model: str | None = None
    """The model that wrote it (assistant messages), as it was named."""


class ToolCallLogEntry(_Record):
    """One tool call for the statistics log. `from_result` fills it from the call and what came of it."""

    tool: str
    server: str
    call_id: str
    argument_hash: str
    started_at: datetime
    duration: float
    status: ToolCallStatus
    error_kind: ToolErrorKind | None = None
    """The result's `error_kind`; None for `ok` (and for an error result whose kind is not known)."""
    error: str | None = None
    cache_hit: bool = False
    chat_id: int | None = None
    caller: ToolCaller = "agent"
    user_id: int | None = None

    @classmethod
    def from_result(
        cls,
        call: ToolCall,
        result: ToolResult,
        *,
        started_at: datetime,
        chat_id: int | None = None,
        caller: ToolCaller = "agent",
    ) -> ToolCallLogEntry:
        """The status follows the result's `error_kind` (`denied` and `cancelled` are statuses of their
        own), else `error` for an error result and `ok` otherwise. An error's text is the result's text.
        The argument hash is the result cache's key (`toolbridge.tools.cache.argument_hash`)."""
        # Here, not at the top: the store opens without the tools package (and the MCP SDK it loads).
        from toolbridge.tools.cache import argument_hash

        status = _STATUS_OF_KIND.get(result.error_kind or "", "error" if result.is_error else "ok")
        return cls(
            tool=call.name,
            server=result.server or "",
            call_id=call.id,
            argument_hash=argument_hash(call.arguments),
            started_at=started_at,
            duration=result.duration,
            status=status,
            error_kind=result.error_kind if result.is_error else None,
            error=result.text if status != "ok" else None,
            cache_hit=result.cached,
            chat_id=chat_id,
            caller=caller,
        )


_STATUS_OF_KIND: dict[str, ToolCallStatus] = {"denied": "denied", "cancelled": "cancelled"}


class ToolStats(_Record):
    """Figures for one tool on one server. Latencies are in seconds.

    `calls` counts every logged call; `succeeded` + `failed` are the calls that finished, and only they
    make the success rate. Declined (`denied`) and `cancelled` calls are counted apart: neither says
    anything about whether the tool works."""

    tool: str
    server: str
    calls: int
    succeeded: int
    failed: int = 0
    denied: int = 0
    cancelled: int = 0
    cache_hits: int
    p50: float
    p95: float
    last_called: datetime
    last_error: str | None
    last_error_at: datetime | None
    callers: dict[str, int] = Field(default_factory=dict)
    """Calls by who made them (`ToolCaller`: agent, gateway, openapi, cli), most first."""

    @computed_field  # type: ignore[prop-decorator]
    @property
    def success_rate(self) -> float | None:
        """Succeeded of the finished calls; None when none finished (all declined or cancelled)."""
        finished = self.succeeded + self.failed
        return self.succeeded / finished if finished else None
