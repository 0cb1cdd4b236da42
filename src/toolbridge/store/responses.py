"""Stored `/v1/responses` answers: each with the conversation it ends, so a later request can name it as
`previous_response_id` and send only what is new. Only the user who made a response finds it (checked in
the query that loads it), and each is forgotten `KEPT_FOR` after it was made (OpenAI keeps 30 days).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import delete, select

from toolbridge.store._schema import StoredResponseRow, utcnow
from toolbridge.store.users import Sessions
from toolbridge.types import Message

__all__ = ["KEPT_FOR", "ResponseArchive"]

KEPT_FOR = timedelta(days=30)
_MESSAGES = TypeAdapter(list[Message])


class ResponseArchive:
    def __init__(self, read: Sessions, write: Sessions) -> None:
        self._read = read
        self._write = write

    def keep(self, response_id: str, user_id: int | None, messages: Sequence[Message]) -> None:
        """Store the conversation `response_id` ends, and forget the responses past `KEPT_FOR`."""
        now = utcnow()
        dumped = _MESSAGES.dump_python(list(messages), mode="json")
        with self._write() as session:
            session.execute(delete(StoredResponseRow).where(StoredResponseRow.created_at < now - KEPT_FOR))
            session.add(StoredResponseRow(id=response_id, user_id=user_id, messages=dumped, created_at=now))

    def find(self, response_id: str, user_id: int | None) -> list[Message] | None:
        """The conversation `response_id` ends, if `user_id` made it and it is not forgotten yet."""
        owner = (
            StoredResponseRow.user_id.is_(None) if user_id is None else StoredResponseRow.user_id == user_id
        )
        query = select(StoredResponseRow.messages).where(
            StoredResponseRow.id == response_id,
            owner,
            StoredResponseRow.created_at >= utcnow() - KEPT_FOR,
        )
        with self._read() as session:
            found = session.scalar(query)
        if found is None:
            return None
        try:
            return _MESSAGES.validate_python(found)
        except ValidationError:
            return None  # written by a release whose messages no longer read: as good as forgotten
