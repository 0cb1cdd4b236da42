"""Neutral messages to rows and back. A message read back equals the message written.

Text that no database can hold or no client can read (a lone UTF-16 surrogate, from a model or a client)
is made readable (U+FFFD) on the way in, and on the way out for rows an older version stored."""

from __future__ import annotations

from typing import assert_never

from toolbridge._values import readable_value
from toolbridge.store._errors import StoreError
from toolbridge.store._schema import MessageRow
from toolbridge.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
)

__all__ = ["message_from_row", "readable_message", "row_from_message"]


def row_from_message(message: Message, *, chat_id: int, position: int) -> MessageRow:
    message = readable_message(message)
    row = MessageRow(chat_id=chat_id, position=position, role=message.role, content="", reasoning="")
    if isinstance(message, SystemMessage | UserMessage):
        row.content = message.content
        if isinstance(message, UserMessage) and message.attachments:
            row.attachments = [part.model_dump(mode="json") for part in message.attachments]
    elif isinstance(message, AssistantMessage):
        row.content = message.content
        row.reasoning = message.reasoning
        row.tool_calls = [call.model_dump(mode="json") for call in message.tool_calls]
    elif isinstance(message, ToolMessage):
        row.name = message.name
        row.content = message.result.text  # readable without parsing JSON; the JSON is what is read back
        row.tool_result = message.result.model_dump(mode="json")
    else:
        assert_never(message)
    return row


def message_from_row(row: MessageRow) -> Message:
    return readable_message(_message_from_row(row))


def readable_message(message: Message) -> Message:
    """`message` with every string readable; the same object when it already was (nearly always)."""
    dumped = message.model_dump()
    readable = readable_value(dumped)
    return message if readable is dumped else type(message).model_validate(readable)


def _message_from_row(row: MessageRow) -> Message:
    if row.role == "system":
        return SystemMessage(content=row.content)
    if row.role == "user":
        return UserMessage(content=row.content, attachments=row.attachments or [])
    if row.role == "assistant":
        return AssistantMessage(
            content=row.content,
            reasoning=row.reasoning,
            tool_calls=[ToolCall.model_validate(call) for call in row.tool_calls or []],
        )
    if row.role == "tool":
        return ToolMessage(name=row.name or "", result=ToolResult.model_validate(row.tool_result))
    raise StoreError(f"message {row.id} has an unknown role {row.role!r}")
