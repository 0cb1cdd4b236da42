"""`Store`: agents, chats with their messages, and the tool-call log, in one database.

The store is synchronous; each method is one short transaction. Async code (the agent loop, the HTTP
server) calls it through `anyio.to_thread.run_sync(store.append_message, chat_id, message)`: SQLite's
driver blocks anyway, and one `Store` is safe to share between threads (every call takes its own
connection from the pool).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from types import TracebackType
from typing import Any, Self

from pydantic import ValidationError
from sqlalchemy import Connection, Engine, delete, func, insert, or_, select, update
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session

from toolbridge._values import readable_text
from toolbridge.config.agents import AgentDefinition
from toolbridge.store._charts import ToolCharts, tool_charts
from toolbridge.store._chat_queries import TITLE_LENGTH, chat_summaries, chat_summary, check_run_owner
from toolbridge.store._convert import message_from_row, row_from_message
from toolbridge.store._engine import display_url, migrate, open_engine, readiness_problem
from toolbridge.store._errors import (
    AgentExistsError,
    AgentNotFoundError,
    ChatNotFoundError,
    SchemaDamagedError,
    StoreError,
)
from toolbridge.store._records import (
    AgentRecord,
    ChatSummary,
    StoredMessage,
    StoreHealth,
    ToolCallLogEntry,
    ToolStats,
)
from toolbridge.store._schema import AgentRow, ChatRow, MessageRow, ToolCallRow, utcnow
from toolbridge.store._stats import tool_stats
from toolbridge.store.responses import ResponseArchive
from toolbridge.store.users import UserDirectory
from toolbridge.types import Message

__all__ = ["TITLE_LENGTH", "Store"]

_log = logging.getLogger(__name__)


class Store:
    """The database at `url` (any SQLAlchemy URL), migrated to the latest schema when opened.

    ```python
    with Store("sqlite:///toolbridge.db") as store:
        chat = store.create_chat(agent="excel-helper")
        store.append_message(chat.id, UserMessage(content="What is in sales.xlsx?"))
        messages = store.get_messages(chat.id)
    ```
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._write_failure: StoreHealth | None = None
        self._reader, self._writer = open_engine(url)
        try:
            migrate(self._reader, self._writer, url)
        except BaseException:
            self._reader.dispose()
            raise

    @property
    def postgresql(self) -> bool:
        """Whether the database is PostgreSQL, which other processes may share (SQLite serves one)."""
        return self._writer.dialect.name == "postgresql"

    @property
    def users(self) -> UserDirectory:
        """Users and their API keys."""
        return UserDirectory(self.reading, self.writing, self._lookup)

    @property
    def responses(self) -> ResponseArchive:
        """Stored `/v1/responses` answers, for `previous_response_id`."""
        return ResponseArchive(self.reading, self.writing)

    @property
    def safe_url(self) -> str:
        """The URL without its password, for messages."""
        return display_url(self.url)

    def close(self) -> None:
        self._reader.dispose()

    def readiness_problem(self) -> str | None:
        """Why the database cannot serve requests now (unreachable, or its schema revision is not this
        toolbridge's); None when it can. Blocks: async callers use a thread."""
        return readiness_problem(self._reader)

    def health(self) -> StoreHealth:
        """Whether the last write succeeded; `degraded` (with the error) from a failed write until the
        next one succeeds. Reads may still work: answers go on, only what they would write is lost."""
        return self._write_failure or StoreHealth(state="ok")

    def _note_write(self, failure: str | None) -> None:
        # Logged on each change of state, not on each failed write: a full disk fails every call.
        if failure is not None and self._write_failure is None:
            _log.error(
                "cannot write to the database %s: %s (answers go on unrecorded)", self.safe_url, failure
            )
            self._write_failure = StoreHealth(state="degraded", error=failure, since=utcnow())
        elif failure is None and self._write_failure is not None:
            _log.warning("the database %s is writable again", self.safe_url)
            self._write_failure = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- agents ------------------------------------------------------------------------------------------

    def create_agent(self, definition: AgentDefinition) -> AgentRecord:
        """Raises `AgentExistsError` when an agent has that name."""
        try:
            with self.writing() as session:
                row = AgentRow(name=definition.name, definition=_agent_json(definition))
                session.add(row)
                session.flush()
                return _agent_record(row)
        except IntegrityError as exc:
            raise AgentExistsError(definition.name) from exc

    def has_agent(self, name: str) -> bool:
        """Whether an agent called `name` is stored (broken or not): a check cheap enough for every
        request."""
        with self._lookup() as connection:
            return connection.scalar(select(AgentRow.id).where(AgentRow.name == name).limit(1)) is not None

    def get_agent(self, name: str) -> AgentRecord:
        """Raises `AgentNotFoundError`."""
        with self.reading() as session:
            return _agent_record(self._agent_row(session, name))

    def list_agents(self) -> list[AgentRecord]:
        with self.reading() as session:
            rows = session.scalars(select(AgentRow).order_by(AgentRow.name))
            return [_agent_record(row) for row in rows]

    def update_agent(self, name: str, definition: AgentDefinition) -> AgentRecord:
        """Replace agent `name`'s definition (a new `definition.name` renames it)."""
        try:
            with self.writing() as session:
                row = self._agent_row(session, name)
                row.name = definition.name
                row.definition = _agent_json(definition)
                row.updated_at = utcnow()
                session.flush()
                return _agent_record(row)
        except IntegrityError as exc:
            raise AgentExistsError(definition.name) from exc

    def delete_agent(self, name: str) -> None:
        """Raises `AgentNotFoundError`. Chats that used the agent keep its name."""
        with self.writing() as session:
            session.delete(self._agent_row(session, name))

    @staticmethod
    def _agent_row(session: Session, name: str) -> AgentRow:
        row = session.scalar(select(AgentRow).where(AgentRow.name == name))
        if row is None:
            raise AgentNotFoundError(name)
        return row

    # -- chats and messages ------------------------------------------------------------------------------

    def create_chat(
        self,
        *,
        agent: str | None = None,
        title: str | None = None,
        user_id: int | None = None,
        model: str | None = None,
    ) -> ChatSummary:
        with self.writing() as session:
            title = readable_text(title) if title is not None else None
            row = ChatRow(agent=agent, title=title, user_id=user_id, model=model)
            session.add(row)
            session.flush()
            return ChatSummary(
                id=row.id,
                title=title or "",
                agent=agent,
                message_count=0,
                created_at=row.created_at,
                updated_at=row.updated_at,
                user_id=user_id,
                model=model,
            )

    def append_message(
        self,
        chat_id: int,
        message: Message,
        *,
        model: str | None = None,
        run_of: tuple[str, str] | None = None,
    ) -> StoredMessage:
        """Store `message` after the chat's last one, committed before this returns; `model`: the
        model that wrote it (kept for assistant messages). `run_of` (run id, replica): only while that
        replica runs that run, else `RunNotOwnedError` (a replica that stalled past its lease must not
        write into a chat whose run another replica took over).

        Concurrent appends to one chat take turns: the chat's row is locked (`FOR UPDATE`; on SQLite the
        write transaction already is) before the last position is read, so no two get the same one.
        """
        with self.writing() as session:
            if run_of is not None:
                check_run_owner(session, *run_of)
            chat = self._chat_row(session, chat_id, for_update=True)
            last = session.scalar(select(func.max(MessageRow.position)).where(MessageRow.chat_id == chat_id))
            row = row_from_message(message, chat_id=chat_id, position=0 if last is None else last + 1)
            row.model = model if message.role == "assistant" else None
            session.add(row)
            chat.updated_at = utcnow()
            session.flush()
            return StoredMessage(
                chat_id=chat_id,
                position=row.position,
                created_at=row.created_at,
                message=message,
                model=row.model,
            )

    def get_chat(self, chat_id: int) -> ChatSummary:
        """Raises `ChatNotFoundError`."""
        with self.reading() as session:
            found = session.execute(chat_summaries().where(ChatRow.id == chat_id)).first()
            if found is None:
                raise ChatNotFoundError(chat_id)
            return chat_summary(found)

    def list_chats(
        self,
        *,
        limit: int = 50,
        offset: int = 0,
        agent: str | None = None,
        user_id: int | None = None,
        containing: str | None = None,
    ) -> list[ChatSummary]:
        """Most recently updated first; `user_id`: that user's chats only; `containing`: chats whose
        title or any message holds that text (case-insensitive)."""
        query = chat_summaries().order_by(ChatRow.updated_at.desc(), ChatRow.id.desc())
        if containing:
            # The text as written: `%` and `_` in it are no wildcards.
            literal = containing.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern = f"%{literal}%"
            in_messages = select(MessageRow.chat_id).where(MessageRow.content.ilike(pattern, escape="\\"))
            query = query.where(or_(ChatRow.title.ilike(pattern, escape="\\"), ChatRow.id.in_(in_messages)))
        if agent is not None:
            query = query.where(ChatRow.agent == agent)
        if user_id is not None:
            query = query.where(ChatRow.user_id == user_id)
        with self.reading() as session:
            return [chat_summary(found) for found in session.execute(query.limit(limit).offset(offset))]

    def count_chats(self) -> int:
        """How many chats are stored (every user's)."""
        with self.reading() as session:
            return int(session.execute(select(func.count()).select_from(ChatRow)).scalar_one())

    def rename_chat(self, chat_id: int, title: str | None) -> ChatSummary:
        """Set the title; None goes back to the first user message."""
        with self.writing() as session:
            chat = self._chat_row(session, chat_id)
            chat.title = readable_text(title) if title is not None else None
        return self.get_chat(chat_id)

    def set_chat_model(self, chat_id: int, model: str | None) -> ChatSummary:
        """Set the model the chat's runs use; None goes back to its agent's."""
        with self.writing() as session:
            self._chat_row(session, chat_id).model = model
        return self.get_chat(chat_id)

    def allow_tool(self, chat_id: int, tool: str) -> None:
        """Let the chat's calls of `tool` run without asking again."""
        with self.writing() as session:
            chat = self._chat_row(session, chat_id, for_update=True)
            if tool not in (allowed := chat.allowed_tools or []):
                chat.allowed_tools = [*allowed, tool]

    def allowed_tools(self, chat_id: int) -> frozenset[str]:
        """The tools allowed for the chat (`allow_tool`)."""
        with self.reading() as session:
            return frozenset(self._chat_row(session, chat_id).allowed_tools or ())

    @staticmethod
    def _chat_row(session: Session, chat_id: int, *, for_update: bool = False) -> ChatRow:
        chat = session.get(ChatRow, chat_id, with_for_update=for_update)
        if chat is None:
            raise ChatNotFoundError(chat_id)
        return chat

    def delete_chat(self, chat_id: int) -> None:
        """Delete the chat and its messages; its tool-call log entries stay, unlinked."""
        with self.writing() as session:
            chat = self._chat_row(session, chat_id)
            # Explicit rather than relying on ON DELETE, so backends without enforced FKs agree.
            session.execute(delete(MessageRow).where(MessageRow.chat_id == chat_id))
            session.execute(update(ToolCallRow).where(ToolCallRow.chat_id == chat_id).values(chat_id=None))
            session.delete(chat)

    def get_messages(self, chat_id: int) -> list[Message]:
        """The chat's messages in order, as stored (a run in progress has calls without results yet)."""
        return [stored.message for stored in self.get_stored_messages(chat_id)]

    def get_history(self, chat_id: int) -> list[Message]:
        """The chat as an agent's history, well-formed (`toolbridge.agent.transcript.well_formed`): a call
        whose result was never stored (the process was killed during it) gets an "interrupted" result,
        so the next request is one providers accept."""
        # Here, not at the top: the store opens without the agent package (and the MCP SDK it loads).
        from toolbridge.agent.transcript import well_formed

        return well_formed(self.get_messages(chat_id))

    def get_stored_messages(self, chat_id: int) -> list[StoredMessage]:
        """The chat's messages with their positions and times. Raises `ChatNotFoundError`."""
        with self.reading() as session:
            self._chat_row(session, chat_id)
            rows = session.scalars(
                select(MessageRow).where(MessageRow.chat_id == chat_id).order_by(MessageRow.position)
            )
            return [
                StoredMessage(
                    chat_id=chat_id,
                    position=r.position,
                    created_at=r.created_at,
                    message=message_from_row(r),
                    model=r.model,
                )
                for r in rows
            ]

    # -- tool-call log -----------------------------------------------------------------------------------

    def log_tool_call(self, entry: ToolCallLogEntry) -> None:
        self.log_tool_calls([entry])

    def log_tool_calls(self, entries: Sequence[ToolCallLogEntry]) -> None:
        """Log several calls in one transaction: one commit, one multi-row INSERT (the gateway logs
        in batches, where the commit and the ORM's bookkeeping per row would cost more than a call)."""
        rows = [
            {
                "chat_id": entry.chat_id,
                "call_id": readable_text(entry.call_id),
                "tool": readable_text(entry.tool),
                "server": readable_text(entry.server),
                "argument_hash": entry.argument_hash,
                "started_at": entry.started_at,
                "duration": entry.duration,
                "status": entry.status,
                "error_kind": entry.error_kind,
                "error": readable_text(entry.error) if entry.error is not None else None,
                "cache_hit": entry.cache_hit,
                "caller": entry.caller,
                "user_id": entry.user_id,
            }
            for entry in entries
        ]
        if not rows:
            return
        with self.writing() as session:
            session.execute(insert(ToolCallRow), rows)

    def tool_stats(self, since: datetime | None = None, *, user_id: int | None = None) -> list[ToolStats]:
        """Calls, success rate, p50/p95 latency, cache hits and last error per tool and server
        (`user_id`: of that user's calls only)."""
        with self.reading() as session:
            return tool_stats(session, since, user_id=user_id)

    def tool_charts(
        self, since: datetime | None = None, *, now: datetime | None = None, user_id: int | None = None
    ) -> list[ToolCharts]:
        """Per tool and server: a latency histogram with percentiles, and calls over time up to `now`."""
        with self.reading() as session:
            return tool_charts(session, since, now=now, user_id=user_id)

    # -- sessions ----------------------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[Session]:
        """One write transaction, committed on success (on SQLite, it holds the write lock from its start)."""
        with self._session(self._writer) as session, session.begin():
            yield session
        self._note_write(None)

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """One read transaction."""
        with self._session(self._reader) as session, session.begin():
            yield session

    @contextmanager
    def _lookup(self) -> Iterator[Connection]:
        """A connection for one small read, without the ORM session's cost (checks made per request)."""
        with self._errors_translated(self._reader), self._reader.connect() as connection:
            yield connection

    @contextmanager
    def _session(self, engine: Engine) -> Iterator[Session]:
        with self._errors_translated(engine), Session(engine, expire_on_commit=False) as session:
            yield session

    @contextmanager
    def _errors_translated(self, engine: Engine) -> Iterator[None]:
        try:
            yield
        except (IntegrityError, StoreError):
            raise
        except SQLAlchemyError as exc:
            missing = _missing_schema_part(exc)
            failure: StoreError = (
                SchemaDamagedError(display_url(self.url), missing)
                if missing is not None
                else StoreError(f"database {display_url(self.url)}: {exc.__class__.__name__}: {exc}")
            )
            if engine is self._writer:
                # The database's own words, without the SQL and its parameters (the user's data).
                reason = str(getattr(exc, "orig", None) or exc).splitlines()[0]
                self._note_write(missing or reason)
            raise failure from exc


# SQLite's words, and PostgreSQL's SQLSTATEs for an undefined table or column.
_MISSING_IN_SQLITE = ("no such table", "no such column", "has no column named")
_MISSING_IN_POSTGRESQL = ("42P01", "42703")


def _missing_schema_part(error: SQLAlchemyError) -> str | None:
    """What the schema lacks, if that is why `error` happened (a table dropped while we run)."""
    original = getattr(error, "orig", None)
    text = str(original or error).splitlines()[0]
    if getattr(original, "sqlstate", None) in _MISSING_IN_POSTGRESQL:
        return text
    return text if any(words in text for words in _MISSING_IN_SQLITE) else None


def _agent_json(definition: AgentDefinition) -> dict[str, Any]:
    return definition.model_dump(mode="json", exclude={"name"})


def _agent_record(row: AgentRow) -> AgentRecord:
    try:
        definition = AgentDefinition.model_validate({**row.definition, "name": row.name})
    except ValidationError as error:
        # One unreadable row (edited by hand, written by another version) must not hide every agent.
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "definition"
        problem = (
            f"the stored agent {row.name!r} is invalid ({key}: {first['msg']}); "
            f"delete it with `toolbridge agents delete {row.name}` and create it again"
        )
        return AgentRecord(
            definition=AgentDefinition.model_construct(name=row.name),
            created_at=row.created_at,
            updated_at=row.updated_at,
            problem=problem,
        )
    return AgentRecord(definition=definition, created_at=row.created_at, updated_at=row.updated_at)
