"""Checking a pass-through reply's calls against the client's tools, and the corrective turns that ask
the model again.

A call naming no tool of the request, or whose arguments break its schema, is a problem the model can
fix when shown it: the reply goes back to the model as an assistant message with one tool result per
call (the problem, or a note that the call is fine but was held back with the others), plus the
dialect's feedback for text that looked like a call but could not be read. Obvious type slips (`"3"`
for an integer) are corrected by the validator and need no retry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from toolbridge.errors import ToolArgumentsError
from toolbridge.models import InvalidToolCall, NamedTool
from toolbridge.tools import validate_arguments
from toolbridge.types import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
)

__all__ = ["CheckedCall", "check_call", "choice_correction", "follows_choice", "repair_turn"]

_LISTED_TOOLS = 20
_HELD_BACK = (
    "This call is valid but was not passed on, because another call in the same reply was not. "
    "Write your reply again with every call, corrected."
)


@dataclass(frozen=True)
class CheckedCall:
    call: ToolCall
    """As the model made it, with its arguments coerced where the schema made the fix obvious."""
    problem: str | None = None
    """Why the client could not run it, in words for the model; None when it can."""


def check_call(call: ToolCall, tools: Sequence[ToolSpec], problem: str | None = None) -> CheckedCall:
    """`call` checked against the client's `tools`; `problem` is one already found (unreadable arguments)."""
    if problem is not None:
        return CheckedCall(call, problem)
    spec = next((tool for tool in tools if tool.name == call.name), None)
    if spec is None:
        names = [tool.name for tool in tools]
        listed = ", ".join(names[:_LISTED_TOOLS]) + (", ..." if len(names) > _LISTED_TOOLS else "")
        return CheckedCall(call, f"There is no tool named {call.name!r}. The tools are: {listed}.")
    try:
        arguments, _notes = validate_arguments(spec, call.arguments)
    except ToolArgumentsError as error:
        return CheckedCall(call, str(error))
    return CheckedCall(call.model_copy(update={"arguments": arguments}))


def repair_turn(
    content: str, reasoning: str, checked: Sequence[CheckedCall], invalid: Sequence[InvalidToolCall]
) -> list[Message]:
    """The reply and what was wrong with it, to send back for a corrected reply."""
    text = "\n".join([content, *(item.raw for item in invalid)]).strip()
    calls = [item.call for item in checked]
    turn: list[Message] = [AssistantMessage(content=text, reasoning=reasoning, tool_calls=calls)]
    for item in checked:
        message = item.problem if item.problem is not None else _HELD_BACK
        result = ToolResult.error(item.call.id, message, kind="invalid_arguments")
        turn.append(ToolMessage(name=item.call.name, result=result))
    if invalid:
        turn.append(UserMessage(content="\n".join(item.feedback for item in invalid)))
    return turn


def follows_choice(calls: Sequence[ToolCall], choice: Literal["required"] | NamedTool | None) -> bool:
    """Whether a reply's `calls` are what `tool_choice` asks for: any call for `required`, a call of the
    named tool for a named one."""
    if choice is None:
        return True
    if isinstance(choice, NamedTool):
        return any(call.name == choice.name for call in calls)
    return bool(calls)


def choice_correction(
    content: str, reasoning: str, calls: Sequence[ToolCall], choice: Literal["required"] | NamedTool
) -> list[Message]:
    """The reply that did not make the call this request needs, and the reminder to make it: each call
    it made instead is answered as not run (the conversation stays well formed for native endpoints)."""
    wanted = f"the tool `{choice.name}`" if isinstance(choice, NamedTool) else "one of your tools"
    turn: list[Message] = [AssistantMessage(content=content, reasoning=reasoning, tool_calls=list(calls))]
    for call in calls:
        result = ToolResult.error(call.id, f"Not run: this request needs a call of {wanted}.", kind="denied")
        turn.append(ToolMessage(name=call.name, result=result))
    did = "called " + ", ".join(f"`{call.name}`" for call in calls) if calls else "called no tool"
    turn.append(
        UserMessage(
            content=f"Your reply {did}, but this request needs a call of {wanted}: call {wanted} now, "
            "in the format described in your instructions."
        )
    )
    return turn
