"""Mixed runs: an agent that also gets the client's `tools`.

The agent runs its own tools as always and offers the client's to the model as external tools
(`toolbridge.agent` shows one the agent also has as `client__<name>`). When the model calls a client
tool, the run pauses: the response carries those calls as `tool_calls` (`finish_reason: "tool_calls"`),
and the client posts the conversation back with a `tool` message per call to resume it.

The conversation is the run's only state. So that the model sees again what the agent did before the
pause (its own calls and their results, which the client never runs), the paused reply's `content` ends
with a record of the run's steps: an HTML comment, hidden where markdown is shown, that the client
sends back unchanged with the rest of the assistant message:

    <!-- toolbridge:steps {"v": 1, "messages": [...our neutral messages...]} -->

Reading a conversation, an assistant message with a record is replaced by the messages it holds.
"""

from __future__ import annotations

import json
import re

from pydantic import TypeAdapter, ValidationError

from toolbridge.agent import RunResult
from toolbridge.agent.transcript import well_formed
from toolbridge.server._errors import ApiError
from toolbridge.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    UserMessage,
)

__all__ = [
    "CLIENT_SOURCE",
    "check_resumable",
    "restore_steps",
    "steps_record",
]

CLIENT_SOURCE = "client"
"""The source of the client's tools: a client tool named like one of the agent's is `client__<name>`."""

_RECORD_VERSION = 1
_RECORD = re.compile(r"<!-- toolbridge:steps (\{.*?\}) -->", re.DOTALL)
_MESSAGES = TypeAdapter(list[Message])


# -- writing a paused run --------------------------------------------------------------------------------


def steps_record(result: RunResult) -> str:
    """The record of what the run added to the conversation (its prompt aside), for the reply's content."""
    added = result.new_messages
    if added and isinstance(added[0], UserMessage):
        added = added[1:]  # the prompt: the client has it
    data = {"v": _RECORD_VERSION, "messages": _MESSAGES.dump_python(added, mode="json")}
    # `>` only ever occurs inside JSON strings, where its escape reads the same: no `-->` ends it early.
    encoded = json.dumps(data, ensure_ascii=False).replace(">", "\\u003e")
    return f"<!-- toolbridge:steps {encoded} -->"


# -- reading a conversation back -------------------------------------------------------------------------


def restore_steps(history: list[Message]) -> list[Message]:
    """`history` with each assistant message that carries a record replaced by the messages it holds;
    results the client posted for calls the model made under a qualified name get that name back."""
    restored: list[Message] = []
    names: dict[str, str] = {}  # call id -> the name the model called it by
    for message in history:
        if isinstance(message, AssistantMessage) and (found := _RECORD.search(message.content)):
            steps = _read_record(found.group(1))
            restored += steps
            for step in steps:
                if isinstance(step, AssistantMessage):
                    names.update({call.id: call.name for call in step.tool_calls})
        elif isinstance(message, ToolMessage) and message.result.call_id in names:
            restored.append(message.model_copy(update={"name": names[message.result.call_id]}))
        else:
            restored.append(message)
    return restored


def _read_record(encoded: str) -> list[Message]:
    try:
        data = json.loads(encoded)
        if not isinstance(data, dict) or data.get("v") != _RECORD_VERSION:
            raise ValueError(f"not a version {_RECORD_VERSION} record")
        messages = _MESSAGES.validate_python(data.get("messages"))
    except (ValueError, ValidationError, RecursionError) as error:
        raise ApiError(
            400,
            "an assistant message's `<!-- toolbridge:steps ... -->` record cannot be read "
            f"({str(error).splitlines()[0]}); send the assistant messages back exactly as they came",
            param="messages",
        ) from error
    return [message for message in messages if not isinstance(message, SystemMessage)]


def check_resumable(history: list[Message]) -> None:
    """A request ending with tool results resumes a run: they must answer calls of the conversation."""
    repaired = well_formed(history)
    if not repaired or not isinstance(repaired[-1], ToolMessage):
        raise ApiError(
            400,
            "the last message is a tool result that answers no call of the conversation: send the "
            "assistant message with its tool_calls before the tool messages",
            param="messages",
        )
