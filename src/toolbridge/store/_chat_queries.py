"""The SQL behind chats: a chat's summary (message count, title, the model of its latest answer) and
whether a run may still write into its chat."""

from __future__ import annotations

from sqlalchemy import Select, func, select
from sqlalchemy.engine import Row
from sqlalchemy.orm import Session

from toolbridge.store._errors import RunNotOwnedError
from toolbridge.store._records import ChatSummary
from toolbridge.store._schema import ChatRow, MessageRow, RunRow

__all__ = ["TITLE_LENGTH", "chat_summaries", "chat_summary", "check_run_owner"]

TITLE_LENGTH = 60
"""Characters of the first user message shown as the title of an untitled chat."""


def chat_summaries() -> Select[ChatRow, int, str | None, str | None]:
    """ChatRow plus its message count, first user message and the model of its latest answer, as
    correlated subqueries (portable SQL)."""
    count = select(func.count()).where(MessageRow.chat_id == ChatRow.id).correlate(ChatRow).scalar_subquery()
    first_user = (
        select(MessageRow.content)
        .where(MessageRow.chat_id == ChatRow.id, MessageRow.role == "user")
        .order_by(MessageRow.position)
        .limit(1)
        .correlate(ChatRow)
        .scalar_subquery()
    )
    answered_by = (
        select(MessageRow.model)
        .where(MessageRow.chat_id == ChatRow.id, MessageRow.model.is_not(None))
        .order_by(MessageRow.position.desc())
        .limit(1)
        .correlate(ChatRow)
        .scalar_subquery()
    )
    return select(ChatRow, count, first_user, answered_by)


def chat_summary(found: Row[ChatRow, int, str | None, str | None]) -> ChatSummary:
    chat, message_count, first_user, answered_by = found
    title = chat.title or _title_from(first_user or "")
    return ChatSummary(
        id=chat.id,
        title=title,
        agent=chat.agent,
        message_count=message_count,
        created_at=chat.created_at,
        updated_at=chat.updated_at,
        user_id=chat.user_id,
        model=chat.model,
        answered_by=answered_by,
    )


def _title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


def check_run_owner(session: Session, run_id: str, replica: str) -> None:
    # Shared-locked until the commit: a takeover (which locks the row to update it) waits for the message
    # and then sees it in the history, or goes first and this one is refused.
    owner = session.execute(
        select(RunRow.replica, RunRow.status).where(RunRow.id == run_id).with_for_update(read=True)
    ).first()
    if owner is None or (owner.replica, owner.status) != (replica, "running"):
        raise RunNotOwnedError(run_id)
