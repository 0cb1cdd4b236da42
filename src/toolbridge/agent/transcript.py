"""Well-formed transcripts: every tool call followed by exactly one result, and no result without its call.

OpenAI and Anthropic reject a request whose assistant message has calls without results (a process
killed during a call, a run that failed between the calls and their results leave such a transcript in
the store). `well_formed` repairs a history before it is sent again, so a resumed chat always works.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolbridge.types import AssistantMessage, Message, ToolCall, ToolMessage, ToolResult

__all__ = ["INTERRUPTED_RESULT", "interrupted_result", "well_formed"]

INTERRUPTED_RESULT = "interrupted: no result was recorded (the call may or may not have run)"
"""The text of the result given to a call whose result was never recorded."""


def interrupted_result(call: ToolCall) -> ToolResult:
    return ToolResult.error(call.id, INTERRUPTED_RESULT, kind="cancelled")


def well_formed(messages: Iterable[Message]) -> list[Message]:
    """`messages` with a result for every call, right after its call's other results, in call order.

    Results with no call just before them (their assistant message was lost) and second results for one
    call are dropped: providers reject those too. A well-formed transcript comes back unchanged."""
    repaired: list[Message] = []
    pending: list[ToolCall] = []  # calls of the latest assistant message not answered yet
    for message in messages:
        if isinstance(message, ToolMessage):
            call = next((c for c in pending if c.id == message.result.call_id), None)
            if call is not None:
                pending.remove(call)
                repaired.append(message)
            continue
        _answer(pending, repaired)
        repaired.append(message)
        if isinstance(message, AssistantMessage):
            pending = list(message.tool_calls)
    _answer(pending, repaired)
    return repaired


def _answer(pending: list[ToolCall], repaired: list[Message]) -> None:
    repaired.extend(ToolMessage(name=call.name, result=interrupted_result(call)) for call in pending)
    pending.clear()
