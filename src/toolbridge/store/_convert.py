"""Neutral messages to rows and back. A message read back equals the message written."""

from __future__ import annotations

from typing import assert_never

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

__all__ = ["message_from_row", "row_from_message"]


def row_from_message(message: Message, *, chat_id: int, position: int) -> MessageRow:
    row = MessageRow(chat_id=chat_id, position=position, role=message.role, content="", reasoning="")
    if isinstance(message, SystemMessage | UserMessage):
        row.content = message.content
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
    if row.role == "system":
        return SystemMessage(content=row.content)
    if row.role == "user":
        return UserMessage(content=row.content)
    if row.role == "assistant":
        return AssistantMessage(
            content=row.content,
            reasoning=row.reasoning,
            tool_calls=[ToolCall.model_validate(call) for call in row.tool_calls or []],
        )
    if row.role == "tool":
        return ToolMessage(name=row.name or "", result=ToolResult.model_validate(row.tool_result))
    raise StoreError(f"message {row.id} has an unknown role {row.role!r}")
