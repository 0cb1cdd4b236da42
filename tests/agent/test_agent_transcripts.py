"""Transcripts sent to a model are always well-formed: every call has exactly one result right after it.

A process killed during a call, or a run that fails between the calls and their results, leaves calls
without results; OpenAI and Anthropic reject such a request, so the chat could never go on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_helpers import destructive_tool, scripted_agent

from toolbridge.agent import ApprovalRequest, MessageAddedEvent
from toolbridge.agent.transcript import INTERRUPTED_RESULT, well_formed
from toolbridge.store import Store
from toolbridge.testing import RecordedRequest, ToolCallSpec, Turn
from toolbridge.types import AssistantMessage, Message, ToolCall, ToolMessage, ToolResult, UserMessage

pytestmark = pytest.mark.anyio


def _call(call_id: str) -> ToolCall:
    return ToolCall(name="calculate", arguments={"expression": "1 + 1"}, id=call_id)


def _result(call_id: str, text: str = "2") -> ToolMessage:
    return ToolMessage(name="calculate", result=ToolResult.error(call_id, text, kind="server_error"))


def wire_is_well_formed(request: RecordedRequest) -> bool:
    """What the OpenAI API checks: each assistant's calls are answered, once each, by the tool messages
    right after it, and no tool message answers anything else."""
    messages: list[dict[str, Any]] = request.messages
    for index, message in enumerate(messages):
        if message["role"] == "tool" and (
            index == 0 or messages[index - 1]["role"] not in ("assistant", "tool")
        ):
            return False
        calls = [call["id"] for call in message.get("tool_calls") or []]
        if not calls:
            continue
        answers = []
        for following in messages[index + 1 :]:
            if following["role"] != "tool":
                break
            answers.append(following["tool_call_id"])
        if answers != calls:
            return False
    return True


def test_well_formed_answers_missing_calls_in_place_and_drops_stray_results() -> None:
    history: list[Message] = [
        UserMessage(content="Add."),
        AssistantMessage(tool_calls=[_call("a"), _call("b"), _call("c")]),
        _result("b"),
        _result("b", "a second result"),
        _result("elsewhere"),
        UserMessage(content="Still there?"),
        _result("orphan"),
        AssistantMessage(tool_calls=[_call("d")]),
    ]
    repaired = well_formed(history)
    assert [(m.role, m.result.call_id if isinstance(m, ToolMessage) else "") for m in repaired] == [
        ("user", ""),
        ("assistant", ""),
        ("tool", "b"),
        ("tool", "a"),
        ("tool", "c"),
        ("user", ""),
        ("assistant", ""),
        ("tool", "d"),
    ]
    interrupted = [m for m in repaired if isinstance(m, ToolMessage) and m.result.call_id != "b"]
    assert all(m.result.is_error and m.result.text == INTERRUPTED_RESULT for m in interrupted)
    assert well_formed(repaired) == repaired


async def test_a_stored_chat_with_unanswered_calls_goes_on(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'chats.db'}") as store:
        chat = store.create_chat()
        for message in [
            UserMessage(content="What are 1 + 1 and 2 + 2?"),
            AssistantMessage(tool_calls=[_call("call_answered"), _call("call_killed")]),
            _result("call_answered"),
            UserMessage(content="Are you there?"),  # sent after the process was killed mid-call
        ]:
            store.append_message(chat.id, message)
        history = store.get_history(chat.id)

    turns = [Turn.text("Yes.", expect=wire_is_well_formed)]
    async with scripted_agent(turns) as (agent, model):
        result = await agent.run("Hello again?", history=history)
    assert result.stop_reason == "final_answer", result.stop_detail
    sent = model.requests[0].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user", "user"]
    assert sent[4]["tool_call_id"] == "call_killed"
    assert INTERRUPTED_RESULT in sent[4]["content"]


async def test_a_history_with_unanswered_calls_is_repaired_for_every_caller() -> None:
    history: list[Message] = [UserMessage(content="Add."), AssistantMessage(tool_calls=[_call("lost")])]
    async with scripted_agent([Turn.text("Done.", expect=wire_is_well_formed)]) as (agent, model):
        result = await agent.run("Go on.", history=history)
    assert result.stop_reason == "final_answer", result.stop_detail
    assert [m["role"] for m in model.requests[0].messages] == ["system", "user", "assistant", "tool", "user"]


async def test_a_run_failing_between_calls_and_results_answers_its_calls() -> None:
    async def broken_approver(request: ApprovalRequest) -> bool:
        raise RuntimeError("the approval window crashed")

    turns = [Turn.tool_calls(ToolCallSpec("delete_file", {"path": "a.txt"}, id="call_delete"))]
    added: list[Message] = []
    async with scripted_agent(turns, tools=[destructive_tool([])], approve=broken_approver) as (agent, _):

        async def read_events() -> None:
            async with agent.stream("Delete a.txt.") as events:
                async for event in events:
                    if isinstance(event, MessageAddedEvent):
                        added.append(event.message)

        with pytest.raises(RuntimeError, match="approval window crashed"):
            await read_events()
    assert [m.role for m in added] == ["user", "assistant", "tool"]
    last = added[-1]
    assert isinstance(last, ToolMessage)
    assert last.result.call_id == "call_delete"
    assert last.result.text == INTERRUPTED_RESULT
    assert well_formed(added) == added  # what a recorder stored from the events needs no repair
