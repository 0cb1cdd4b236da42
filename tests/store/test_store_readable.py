"""Nothing unreadable is stored, and a chat stored unreadable by an older version reads back readable.

A lone UTF-16 surrogate cannot be encoded as UTF-8: in a stored message it made every read of the chat
fail (the HTTP API answered 500 for it from then on)."""

from __future__ import annotations

from toolbridge.store import Store
from toolbridge.store._schema import MessageRow
from toolbridge.types import AssistantMessage, ToolCall, ToolMessage, ToolResult, UserMessage


def test_lone_surrogates_are_stored_as_replacement_characters(store: Store) -> None:
    chat = store.create_chat(title="title \ud800")
    store.append_message(chat.id, UserMessage(content="hi \udc00"))
    store.append_message(
        chat.id,
        AssistantMessage(
            content="x\ud800",
            reasoning="y\udfff",
            tool_calls=[ToolCall(name="t", arguments={"k\ud800": "v"}, id="c")],
        ),
    )
    store.append_message(
        chat.id, ToolMessage(name="t", result=ToolResult.error("c", "bad \ud800", kind="server_error"))
    )

    messages = store.get_messages(chat.id)
    assert store.get_chat(chat.id).title == "title \ufffd"
    assert messages[0] == UserMessage(content="hi \ufffd")
    assistant = messages[1]
    assert isinstance(assistant, AssistantMessage)
    assert (assistant.content, assistant.reasoning) == ("x\ufffd", "y\ufffd")
    assert assistant.tool_calls[0].arguments == {"k\ufffd": "v"}
    tool = messages[2]
    assert isinstance(tool, ToolMessage)
    assert tool.result.text == "bad \ufffd"


def test_a_chat_stored_with_lone_surrogates_reads_back_readable(store: Store) -> None:
    chat = store.create_chat()
    damaged = MessageRow(  # as an older version wrote it: JSON columns escape the surrogate
        chat_id=chat.id,
        position=0,
        role="assistant",
        content="",
        reasoning="",
        tool_calls=[{"name": "read_note", "arguments": {"name": "n\ud800"}, "id": "call_1", "source": None}],
    )
    with store.writing() as session:
        session.add(damaged)

    [assistant, result] = store.get_history(chat.id)
    assert isinstance(assistant, AssistantMessage)
    assert assistant.tool_calls[0].arguments == {"name": "n\ufffd"}
    assert isinstance(result, ToolMessage)  # and the unanswered call has its result
    assert result.result.call_id == "call_1"
    assistant.model_dump_json()  # readable: encodes as UTF-8 JSON
