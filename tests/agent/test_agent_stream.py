"""Streaming: the events, closing the model's stream right after its calls, tool-mode recovery and
fallback, approval, and leaving or cancelling a stream. An in-process model, except where the wire is
the point (the HTTP stream closed after a call, an endpoint rejecting tools)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from agent_helpers import agent_for, calculate, destructive_tool, in_text, results_sent, scripted_agent

from toolbridge.agent import (
    AgentDefinition,
    AgentEvent,
    ApprovalRequest,
    FinalEvent,
    MessageAddedEvent,
    TextDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    parse_event,
)
from toolbridge.errors import UsageError
from toolbridge.models import ReasoningDelta
from toolbridge.testing import FunctionModel, ToolCallSpec, Turn
from toolbridge.tools import FunctionTool
from toolbridge.types import AssistantMessage, ToolCall

pytestmark = pytest.mark.anyio

TIME = ToolCallSpec("get_current_time", {"timezone": "UTC"})
GET_TIME = ToolCall(name="get_current_time", arguments={"timezone": "UTC"})


async def collect(agent_stream: object) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    async with agent_stream as stream:  # type: ignore[attr-defined]
        async for event in stream:
            events.append(event)
    return events


async def test_events_tell_the_whole_run_in_order_and_survive_json() -> None:
    thinking = [ReasoningDelta(piece) for piece in ("Need ", "the ", "time", ".")]
    model = FunctionModel.replying([*thinking, GET_TIME], ["It ", "is ", "late."])
    events = await collect(agent_for(model).stream("What time is it?"))

    assert [e.type for e in events] == [
        "message_added",  # the prompt
        "step_started",
        "reasoning_delta",
        "reasoning_delta",
        "reasoning_delta",
        "reasoning_delta",
        "step_finished",
        "message_added",  # the reply with its call
        "tool_call_started",
        "tool_call_finished",
        "message_added",  # the result
        "step_started",
        "text_delta",
        "text_delta",
        "text_delta",
        "step_finished",
        "message_added",  # the answer
        "final",
    ]
    assert [parse_event(e.model_dump_json()) for e in events] == events
    added = [e for e in events if isinstance(e, MessageAddedEvent)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert [e.message for e in added] == final.result.messages
    assert [e.index for e in added] == [0, 1, 2, 3]
    started, finished = events[8], events[9]
    assert started.type == "tool_call_started"
    assert started.call.name == "get_current_time"
    assert started.call.arguments == {"timezone": "UTC"}
    assert started.server == "native"
    assert finished.type == "tool_call_finished"
    assert not finished.is_error
    assert '"timezone": "UTC"' in finished.result_preview
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == "It is late."
    assert json.loads(final.model_dump_json())["result"]["stop_reason"] == "final_answer"


async def test_the_stream_is_closed_right_after_the_call_and_the_filler_never_sent() -> None:
    # Seed 002: a complete call, then 2,000 tokens of "(waiting...)" at 200 tokens/s.
    first = Turn.calls_in_text(TIME, before="Let me check.\n").then_tokens(
        2000, token=" (waiting for the tool result...)", delay=0.005
    )
    async with scripted_agent([first, Turn.text("Noon.")], tool_mode="prompt") as (agent, server):
        events = await collect(agent.stream("What time is it?"))
        reply = await server.wait_for_reply_async(1)

    assert reply.client_disconnected
    assert reply.segment_ended_at[-1] is None  # the filler's last token was never sent
    assert reply.chunks_sent < reply.chunks_total - 1900
    shown = "".join(e.text for e in events if isinstance(e, TextDeltaEvent))
    assert shown == "Let me check.\nNoon."  # text is kept exactly as the model wrote it
    assert "waiting" not in json.dumps([e.model_dump(mode="json") for e in events])
    [finished] = [e for e in events if e.type == "step_finished" and e.step == 1]
    assert finished.closed_early


async def test_calls_written_back_to_back_are_all_read_before_the_stream_closes() -> None:
    calls = [calculate(f"{n} * 2") for n in (1, 2, 3)]
    first = [in_text(*calls), "\nNow I wait.", *(" (waiting)" for _ in range(500))]
    model = FunctionModel.replying(first, "2, 4, 6", tool_mode="prompt")
    result = await agent_for(model).run("Double 1, 2 and 3.")

    assert [r.result.text for r in result.tool_calls] == ["2", "4", "6"]
    assert str(model.requests[1].messages[-1]).count("<tool_result") == 3
    assert not model.replies[0].completed  # the stream was closed at "Now I wait."
    assert len(model.replies[0].events) == 2


async def test_markup_leaked_into_native_text_is_recovered_as_calls() -> None:
    leaked = [
        "<tool_call>" + json.dumps({"name": "calculate", "arguments": {"expression": "2+2"}}),
        "</tool_call>",
    ]
    model = FunctionModel.replying(leaked, "4", tool_mode="native")
    events = await collect(agent_for(model).stream("2+2?"))

    assert not any(isinstance(e, TextDeltaEvent) and "tool_call" in e.text for e in events)
    assistant = model.requests[1].messages[-2]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.tool_calls[0].name == "calculate"
    assert results_sent(model.requests[1])[0].text == "4"
    assert model.requests[1].tools  # still native mode


async def test_auto_mode_falls_back_to_prompt_mode_when_tools_are_rejected(tool_mode_memory: Path) -> None:
    script = [
        Turn.error(400, '"scripted-model" does not support tools'),
        Turn.calls_in_text(ToolCallSpec("calculate", {"expression": "15 + 27"})),
        Turn.text("42"),
    ]
    async with scripted_agent(script, tool_mode="auto") as (agent, server):
        events = await collect(agent.stream("15 + 27?"))

    first, retried, answered = server.requests
    assert first.tools
    assert not retried.tools
    assert not answered.tools
    assert "<tool_call>" in retried.messages[0]["content"]  # the catalog and convention, in the prompt
    assert answered.messages[-1]["content"].endswith(">42</tool_result>")
    [changed] = [e for e in events if e.type == "tool_mode_changed"]
    assert changed.tool_mode == "prompt"
    assert "does not support tools" in changed.reason
    assert agent.model.tool_mode == "auto"  # the switch was the run's: the model is shared by chats
    assert "prompt" in (tool_mode_memory / "tool_modes.json").read_text()
    assert isinstance(events[-1], FinalEvent)
    assert events[-1].result.tool_mode == "prompt"


@pytest.mark.parametrize("approved", [False, True])
async def test_a_destructive_call_waits_for_approval(approved: bool) -> None:
    deleted: list[str] = []
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return approved

    model = FunctionModel.replying(ToolCall(name="delete_file", arguments={"path": "/tmp/x"}), "OK.")
    events = await collect(
        agent_for(model, tools=[destructive_tool(deleted)], approve=approve).stream("Delete /tmp/x")
    )

    [request] = asked
    assert request.call.arguments == {"path": "/tmp/x"}
    assert request.reason == "the tool is marked as destructive"
    types = [e.type for e in events]
    assert (
        types.index("approval_requested")
        < types.index("approval_decided")
        < types.index("tool_call_finished")
    )
    [result] = results_sent(model.requests[1])
    [finished] = [e for e in events if isinstance(e, ToolCallFinishedEvent)]
    if approved:
        assert deleted == ["/tmp/x"]
        assert result.text == "deleted /tmp/x"
        assert finished.error_kind is None
    else:
        assert deleted == []
        assert "The user declined this call" in result.text
        assert finished.error_kind == "denied"  # shown as declined without reading the message


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_approvers_own_exception_surfaces_as_itself(streamed: bool) -> None:
    deleted: list[str] = []

    async def approve(request: ApprovalRequest) -> bool:
        raise PermissionError("the approval service is down")

    model = FunctionModel.replying([ToolCall(name="delete_file", arguments={"path": "/tmp/x"}), GET_TIME])
    agent = agent_for(model, tools=[destructive_tool(deleted)], approve=approve)
    run = collect(agent.stream("Delete /tmp/x")) if streamed else agent.run("Delete /tmp/x")
    with pytest.raises(PermissionError, match="the approval service is down"):
        await run
    assert deleted == []


async def test_approval_policy_overrides_and_no_approver_means_declined() -> None:
    deleted: list[str] = []
    never_ask = AgentDefinition(approval={"tools": {"delete_*": "never"}, "servers": {"native": "always"}})
    model = FunctionModel.replying(
        [ToolCall(name="delete_file", arguments={"path": "a"}), calculate("1")], "Done."
    )
    result = await agent_for(model, tools=[destructive_tool(deleted)], definition=never_ask).run("Go.")

    assert deleted == ["a"]  # the tool rule beats the server rule
    declined = result.tool_calls[1]
    assert declined.approved is False
    assert "no one could be asked" in declined.result.text
    assert "native" in declined.result.text


async def test_leaving_the_stream_early_cancels_the_run_and_its_tool() -> None:
    tool_started, tool_cancelled = anyio.Event(), anyio.Event()

    async def wait_forever() -> str:
        """Never return."""
        tool_started.set()
        try:
            await anyio.sleep_forever()
        finally:
            tool_cancelled.set()
        return "unreachable"

    agent = agent_for(
        FunctionModel.replying(ToolCall(name="wait_forever")),
        tools=[FunctionTool.from_function(wait_forever)],
    )
    async with agent.stream("Wait.") as stream:
        async for event in stream:
            if isinstance(event, ToolCallStartedEvent):
                await tool_started.wait()
                break

    assert tool_cancelled.is_set()
    assert stream.result is not None
    assert stream.result.stop_reason == "cancelled"
    assert "did not run" in stream.result.tool_calls[0].result.text


async def test_cancel_ends_the_run_with_a_final_event() -> None:
    tool_started = anyio.Event()

    async def wait_forever() -> str:
        """Never return."""
        tool_started.set()
        await anyio.sleep_forever()
        return "unreachable"

    agent = agent_for(
        FunctionModel.replying(ToolCall(name="wait_forever")),
        tools=[FunctionTool.from_function(wait_forever)],
    )
    events: list[AgentEvent] = []
    async with agent.stream("Wait.") as stream:
        async for event in stream:
            events.append(event)
            if isinstance(event, ToolCallStartedEvent):
                await tool_started.wait()
                stream.cancel()

    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.stop_reason == "cancelled"
    assert final.result.steps == 1
    # Every message of the cancelled run was still announced, so a store keeps the whole transcript.
    added = [e.message for e in events if isinstance(e, MessageAddedEvent)]
    assert added == final.result.messages
    assert "did not run" in final.result.messages[-1].result.text  # type: ignore[union-attr]


async def test_iterating_without_entering_the_stream_says_how_to_use_it() -> None:
    with pytest.raises(UsageError, match=r"async with agent\.stream"):
        async for _ in agent_for(FunctionModel.replying()).stream("Hi"):
            pass
