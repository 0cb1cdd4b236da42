"""Messages round-trip exactly; chats list newest first with counts and titles; deletes cascade."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from store_helpers import EVERY_KIND

from toolbridge.store import ChatNotFoundError, Store, ToolCallLogEntry
from toolbridge.types import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
)


def test_every_message_kind_round_trips_exactly(store: Store, db_url: str) -> None:
    chat = store.create_chat(agent="helper")
    positions = [store.append_message(chat.id, message).position for message in EVERY_KIND]
    assert positions == list(range(len(EVERY_KIND)))
    with Store(db_url) as reopened:  # read back from the file, not from anything cached in memory
        assert reopened.get_messages(chat.id) == EVERY_KIND
        stored = reopened.get_stored_messages(chat.id)
    assert [entry.position for entry in stored] == positions
    assert all(entry.created_at.tzinfo is UTC for entry in stored)


def test_chats_are_listed_newest_first_with_counts_and_titles(store: Store) -> None:
    first = store.create_chat(agent="a")
    second = store.create_chat(title="Named on purpose")
    third = store.create_chat()
    store.append_message(first.id, SystemMessage(content="system text is never a title"))
    store.append_message(first.id, UserMessage(content="  How many\nrows are in   sales.xlsx? " + "x" * 100))
    store.append_message(second.id, UserMessage(content="not the title"))
    store.append_message(first.id, AssistantMessage(content="Let me look."))  # first is now the newest

    chats = store.list_chats()
    assert [chat.id for chat in chats] == [first.id, second.id, third.id]
    by_id = {chat.id: chat for chat in chats}
    assert by_id[first.id].message_count == 3
    assert by_id[first.id].title.startswith("How many rows are in sales.xlsx? xxx")
    assert by_id[first.id].title.endswith("…")
    assert len(by_id[first.id].title) == 60
    assert by_id[first.id].agent == "a"
    assert by_id[second.id].title == "Named on purpose"
    assert by_id[third.id].title == ""
    assert by_id[third.id].message_count == 0
    assert by_id[first.id].updated_at > by_id[first.id].created_at

    assert [chat.id for chat in store.list_chats(limit=1, offset=1)] == [second.id]
    assert [chat.id for chat in store.list_chats(agent="a")] == [first.id]
    assert store.get_chat(first.id) == by_id[first.id]


def test_renaming_a_chat_and_going_back_to_the_first_user_message(store: Store) -> None:
    chat = store.create_chat()
    store.append_message(chat.id, UserMessage(content="the question"))
    assert store.rename_chat(chat.id, "A better title").title == "A better title"
    assert store.rename_chat(chat.id, None).title == "the question"


def test_deleting_a_chat_removes_its_messages_and_keeps_its_tool_log(store: Store) -> None:
    chat = store.create_chat()
    store.append_message(chat.id, UserMessage(content="hi"))
    call = ToolCall(name="add", arguments={})
    store.log_tool_call(
        ToolCallLogEntry.from_result(
            call, ToolResult(call_id=call.id, server="basic"), started_at=datetime.now(UTC), chat_id=chat.id
        )
    )
    store.delete_chat(chat.id)
    with pytest.raises(ChatNotFoundError):
        store.get_messages(chat.id)
    assert store.list_chats() == []
    assert store.tool_stats()[0].calls == 1


def test_unknown_chats_raise_with_a_hint(store: Store) -> None:
    with pytest.raises(ChatNotFoundError, match="toolbridge history"):
        store.append_message(404, UserMessage(content="lost"))
    with pytest.raises(ChatNotFoundError):
        store.get_chat(404)
    with pytest.raises(ChatNotFoundError):
        store.delete_chat(404)


def test_a_search_finds_title_or_message_text_and_takes_wildcards_literally(store: Store) -> None:
    plain = store.create_chat(agent="default", title="Plans for Paris")
    store.append_message(plain.id, UserMessage(content="What is 100% sure about the trip?"))
    other = store.create_chat(agent="default", title="Groceries")
    store.append_message(other.id, UserMessage(content="milk_and_eggs"))

    def found(text: str) -> list[int]:
        return [chat.id for chat in store.list_chats(containing=text)]

    assert found("paris") == [plain.id]
    assert found("100%") == [plain.id]
    assert found("%") == [plain.id]  # a literal percent sign, not "anything"
    assert found("_and_") == [other.id]
    assert found("k_a") == [other.id]
    assert found("x_y") == []


def test_a_chat_keeps_its_model_and_which_model_wrote_each_answer(store: Store, db_url: str) -> None:
    chat = store.create_chat(agent="helper", model="fast")
    assert chat.model == "fast"
    store.append_message(chat.id, UserMessage(content="Hi"), model="fast")  # only answers say who wrote them
    store.append_message(chat.id, AssistantMessage(content="Hello."), model="fast")
    assert store.set_chat_model(chat.id, "careful").model == "careful"
    store.append_message(chat.id, AssistantMessage(content="Hello again."), model="careful")
    store.append_message(chat.id, UserMessage(content="And?"))
    with Store(db_url) as reopened:
        stored = reopened.get_stored_messages(chat.id)
        (listed,) = reopened.list_chats()
    assert [entry.model for entry in stored] == [None, "fast", "careful", None]
    assert (listed.model, listed.answered_by) == ("careful", "careful")
    assert store.set_chat_model(chat.id, None).model is None  # back to its agent's
    assert store.get_chat(chat.id).answered_by == "careful"
    with pytest.raises(ChatNotFoundError):
        store.set_chat_model(chat.id + 1, "fast")


def test_tools_allowed_for_a_chat_stay_with_that_chat(store: Store) -> None:
    chat, other = store.create_chat(), store.create_chat()
    assert store.allowed_tools(chat.id) == frozenset()
    store.allow_tool(chat.id, "files__delete")
    store.allow_tool(chat.id, "files__delete")  # allowed once is enough
    store.allow_tool(chat.id, "excel__write")
    assert store.allowed_tools(chat.id) == {"files__delete", "excel__write"}
    assert store.allowed_tools(other.id) == frozenset()
    with pytest.raises(ChatNotFoundError):
        store.allow_tool(other.id + 1, "files__delete")
