"""Stored `/v1/responses` answers: found again only by the user who made them, forgotten after
`KEPT_FOR`, and deleted with their user (whose id a later user may get again)."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update

from toolbridge.store import Store
from toolbridge.store._schema import StoredResponseRow, UserRow, utcnow
from toolbridge.store.responses import KEPT_FOR
from toolbridge.types import AssistantMessage, ToolCall, UserMessage

CONVERSATION = [
    UserMessage(content="Weather in Paris?"),
    AssistantMessage(
        content="Checking.", tool_calls=[ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"})]
    ),
]


def user_id(store: Store, name: str) -> int:
    store.users.add(name)
    with store.reading() as session:
        found = session.scalar(select(UserRow.id).where(UserRow.name == name))
    assert found is not None
    return found


def test_only_its_user_finds_a_stored_response(store: Store) -> None:
    alice = user_id(store, "alice")
    bob = user_id(store, "bob")
    store.responses.keep("resp_a", alice, CONVERSATION)
    store.responses.keep("resp_open", None, CONVERSATION)

    assert store.responses.find("resp_a", alice) == CONVERSATION
    assert store.responses.find("resp_a", bob) is None
    assert store.responses.find("resp_a", None) is None
    assert store.responses.find("resp_open", None) == CONVERSATION
    assert store.responses.find("resp_open", alice) is None
    assert store.responses.find("resp_missing", alice) is None


def test_old_responses_are_forgotten_and_a_removed_users_are_deleted(store: Store) -> None:
    alice = user_id(store, "alice")
    store.responses.keep("resp_old", alice, CONVERSATION)
    store.responses.keep("resp_new", alice, CONVERSATION)
    with store.writing() as session:
        session.execute(
            update(StoredResponseRow)
            .where(StoredResponseRow.id == "resp_old")
            .values(created_at=utcnow() - KEPT_FOR - timedelta(minutes=1))
        )
    assert store.responses.find("resp_old", alice) is None
    store.responses.keep("resp_newer", alice, CONVERSATION)  # keeping one prunes the old ones
    with store.reading() as session:
        assert session.get(StoredResponseRow, "resp_old") is None

    store.users.remove("alice")
    with store.reading() as session:
        assert session.get(StoredResponseRow, "resp_new") is None
