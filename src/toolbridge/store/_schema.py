"""The database tables, as SQLAlchemy 2 typed models. Migrations in `migrations/` build exactly this.

Times are stored as UTC and read back timezone-aware on every backend (SQLite keeps no zone).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

__all__ = [
    "AgentRow",
    "ApiKeyRow",
    "Base",
    "ChatRow",
    "MessageRow",
    "ModelUsageRow",
    "RunEventRow",
    "RunRow",
    "RunSignalRow",
    "StoredResponseRow",
    "ToolCallRow",
    "UTCDateTime",
    "UserRequestRow",
    "UserRow",
    "utcnow",
]

# Named constraints, so later migrations can drop or alter them on every backend (SQLite needs names
# for batch mode to find them).
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """A datetime stored as naive UTC and returned aware, so SQLite and PostgreSQL behave the same."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError(f"naive datetime {value!r}: pass a timezone-aware time")
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class AgentRow(Base):
    """A stored agent. The whole definition is JSON, so new definition fields need no migration."""

    __tablename__ = "agents"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    definition: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ChatRow(Base):
    __tablename__ = "chats"
    __table_args__ = (Index("ix_chats_updated_at", "updated_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    title: Mapped[str | None] = mapped_column(Text)
    """None: listings show the start of the first user message."""
    agent: Mapped[str | None] = mapped_column(String(200))
    """The agent's name. Not a foreign key: agents may also come from the config file."""
    user_id: Mapped[int | None] = mapped_column(Integer)
    """Whose chat it is (`users.id`); None for chats made without users, and those of removed users:
    admins'. Not a foreign key: adding one would rebuild this table on SQLite (see migration 0005)."""
    model: Mapped[str | None] = mapped_column(String(200))
    """The model its runs use (a name `resolve_model` knows); None: its agent's."""
    allowed_tools: Mapped[list[str] | None] = mapped_column(JSON)
    """Tools the user allowed for this chat: their calls run without asking again."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class MessageRow(Base):
    """One neutral message. `tool_calls` (assistant), `tool_result` (tool) and `attachments` (user) hold
    the typed parts as JSON; `content` holds the readable text of every kind, the tool result's text
    included."""

    __tablename__ = "messages"
    __table_args__ = (UniqueConstraint("chat_id", "position", name="uq_messages_chat_id_position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    """0, 1, 2 ... in conversation order within the chat."""
    role: Mapped[str] = mapped_column(String(20))
    name: Mapped[str | None] = mapped_column(String(200))
    """The tool's name, for tool messages."""
    content: Mapped[str] = mapped_column(Text, default="")
    reasoning: Mapped[str] = mapped_column(Text, default="")
    tool_calls: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    tool_result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    attachments: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    """Resources attached to a user message (content parts)."""
    model: Mapped[str | None] = mapped_column(String(200))
    """The model that wrote an assistant message, as it was named; None for other messages (and
    those stored before it was recorded)."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ToolCallRow(Base):
    """One tool call as it happened, for statistics. Outlives its chat (the chat link is then cleared)."""

    __tablename__ = "tool_calls"
    __table_args__ = (
        Index("ix_tool_calls_started_at", "started_at"),
        Index("ix_tool_calls_tool_server_started_at", "tool", "server", "started_at"),
        Index("ix_tool_calls_chat_id", "chat_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    chat_id: Mapped[int | None] = mapped_column(ForeignKey("chats.id", ondelete="SET NULL"))
    call_id: Mapped[str] = mapped_column(String(200))
    tool: Mapped[str] = mapped_column(String(200))
    server: Mapped[str] = mapped_column(String(200))
    """The server that ran it, `native`, or empty when the call never reached a tool."""
    argument_hash: Mapped[str] = mapped_column(String(64))
    """sha256 of the canonical JSON arguments, as the result cache keys them."""
    started_at: Mapped[datetime] = mapped_column(UTCDateTime)
    duration: Mapped[float] = mapped_column(Float)
    """Seconds."""
    status: Mapped[str] = mapped_column(String(20))
    """ok, error, denied or cancelled (`toolbridge.store.ToolCallStatus`)."""
    error_kind: Mapped[str | None] = mapped_column(String(30))
    """Why an `error` call failed (`toolbridge.types.ToolErrorKind`): timeout, invalid_arguments, ..."""
    error: Mapped[str | None] = mapped_column(Text)
    cache_hit: Mapped[bool] = mapped_column(Boolean, default=False)
    caller: Mapped[str] = mapped_column(String(20), default="agent", server_default="agent")
    """Who made the call (`toolbridge.store.ToolCaller`); rows from before it was kept say `agent`."""
    user_id: Mapped[int | None] = mapped_column(Integer)
    """The user (`users.id`) whose request made the call; None without users."""


class ModelUsageRow(Base):
    """The model tokens of one run, for a user's tokens per day and usage figures (`toolbridge stats
    --user`): written when the run is admitted, added to as each of its model requests completes."""

    __tablename__ = "model_usage"
    __table_args__ = (Index("ix_model_usage_user_id_finished_at", "user_id", "finished_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int | None] = mapped_column(Integer)
    """`users.id`; None without users. Not a foreign key, as `chats.user_id`."""
    finished_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    """When the run was admitted or last charged."""
    input_tokens: Mapped[int] = mapped_column(Integer)
    output_tokens: Mapped[int] = mapped_column(Integer)
    reserved_tokens: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """Tokens the run in flight holds back from its user's day beyond what it was charged (0 once over)."""


class StoredResponseRow(Base):
    """A `/v1/responses` answer with the conversation it ends, for a later request's
    `previous_response_id`; only its user reads it, and it is forgotten after a while."""

    __tablename__ = "stored_responses"

    id: Mapped[str] = mapped_column(String(100), primary_key=True)
    user_id: Mapped[int | None] = mapped_column(Integer, index=True)
    """`users.id`; None without users. Removing a user deletes theirs."""
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    """The neutral messages, the system message aside (instructions are not carried over)."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)


class UserRow(Base):
    """Someone (or some app) allowed to use `toolbridge serve` once users exist."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ApiKeyRow(Base):
    """A user's API key: `prefix` finds the row, `secret_hash` (SHA-256 of the whole key) proves it."""

    __tablename__ = "api_keys"
    __table_args__ = (Index("ix_api_keys_user_id", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    prefix: Mapped[str] = mapped_column(String(40), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    label: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class RunRow(Base):
    """A chat's run, owned by the replica running it while its lease lasts.

    The owner renews `lease_until`; when it stops renewing (the replica died), any replica may mark the
    run `interrupted`. At most one run per chat is `running` (a partial unique index), so two replicas
    cannot start runs on one chat at once."""

    __tablename__ = "runs"
    __table_args__ = (
        Index(
            "uq_runs_chat_id_running",
            "chat_id",
            unique=True,
            sqlite_where=text("status = 'running'"),
            postgresql_where=text("status = 'running'"),
        ),
        Index("ix_runs_status_lease_until", "status", "lease_until"),
    )

    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"))
    replica: Mapped[str] = mapped_column(String(200))
    """Which `toolbridge serve` process owns the run (host, pid and a random part)."""
    status: Mapped[str] = mapped_column(String(20))
    """running, completed, cancelled, failed or interrupted."""
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    lease_until: Mapped[datetime] = mapped_column(UTCDateTime)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class RunEventRow(Base):
    """One event of a run as its event streams send it (JSON). The rows are the truth the replicas'
    streams read; `id` orders them and is the SSE event id a reconnecting stream resumes after."""

    __tablename__ = "run_events"
    __table_args__ = (Index("ix_run_events_chat_id_id", "chat_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    chat_id: Mapped[int] = mapped_column(ForeignKey("chats.id", ondelete="CASCADE"))
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    data: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class RunSignalRow(Base):
    """What another replica asks of a run's owner: `cancel`, an approval's answer (`approve` or
    `deny` with the call's id), or a server's question's answer (`answer` with the question's request
    id as `call_id` and the answer as `payload`). Rows, so a signal sent while the owner's listener
    reconnects still arrives (the owner also reads them on every lease renewal)."""

    __tablename__ = "run_signals"
    __table_args__ = (Index("ix_run_signals_run_id_id", "run_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))
    call_id: Mapped[str | None] = mapped_column(String(200))
    payload: Mapped[str | None] = mapped_column(Text)
    """An `answer`'s JSON `{"action", "content"}`; blanked once the owner took it (a form may ask for
    secrets)."""
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class UserRequestRow(Base):
    """A request of a user that started a run, for requests-per-minute limits counted across replicas."""

    __tablename__ = "user_requests"
    __table_args__ = (Index("ix_user_requests_user_name_at", "user_name", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_name: Mapped[str] = mapped_column(String(200))
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
