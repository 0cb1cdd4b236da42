"""`FunctionModel`: replies written by a function, in process, recorded; with the agent loop on top."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from toolbridge.agent import Agent
from toolbridge.errors import ModelError
from toolbridge.models import (
    Finish,
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from toolbridge.testing import FunctionModel
from toolbridge.types import ToolCall, ToolMessage, Usage, UserMessage

pytestmark = pytest.mark.anyio

HI = ModelRequest(messages=[UserMessage(content="Hi")])


async def drain(model: FunctionModel, request: ModelRequest = HI) -> list[ModelEvent]:
    async with model.stream(request) as events:
        return [event async for event in events]


async def test_pieces_become_events_and_a_finish_is_added() -> None:
    call = ToolCall(name="calculate", arguments={"expression": "1 + 1"}, id="call_1")
    usage = UsageReport(Usage(input_tokens=3, output_tokens=2))
    model = FunctionModel(lambda _request: ["Let me add.", call, usage])

    assert await drain(model) == [
        TextDelta("Let me add."),
        ToolCallDelta(0, id="call_1", name="calculate", arguments='{"expression": "1 + 1"}'),
        usage,
        Finish("tool_calls"),
    ]
    assert await drain(FunctionModel(lambda _request: "Hello.")) == [TextDelta("Hello."), Finish("stop")]


async def test_sync_and_async_generators_and_coroutines_all_write_replies() -> None:
    def sync_generator(_request: ModelRequest) -> Iterator[Any]:
        yield ReasoningDelta("hmm")
        yield "Hi"

    async def async_generator(_request: ModelRequest) -> AsyncIterator[Any]:
        yield ReasoningDelta("hmm")
        yield "Hi"

    async def coroutine(_request: ModelRequest) -> list[Any]:
        return [ReasoningDelta("hmm"), "Hi"]

    expected = [ReasoningDelta("hmm"), TextDelta("Hi"), Finish("stop")]
    for function in (sync_generator, async_generator, coroutine):
        assert await drain(FunctionModel(function)) == expected


async def test_requests_and_replies_are_recorded_and_a_closed_stream_is_not_completed() -> None:
    model = FunctionModel(lambda _request: ["one", "two"])
    async with model.stream(HI) as events:
        async for _ in events:
            break
    await drain(model)

    assert model.requests == [HI, HI]
    assert [(r.completed, len(r.events)) for r in model.replies] == [(False, 1), (True, 3)]


async def test_a_function_raising_is_the_model_failing() -> None:
    def failing(_request: ModelRequest) -> str:
        raise ModelError("overloaded", model="function-model", status=503)

    with pytest.raises(ModelError, match="overloaded"):
        await drain(FunctionModel(failing))


async def test_replying_answers_in_order_and_fails_on_one_request_too_many() -> None:
    model = FunctionModel.replying("first", lambda request: f"echo: {request.messages[-1].content}")
    assert (await drain(model))[0] == TextDelta("first")
    assert (await drain(model))[0] == TextDelta("echo: Hi")
    with pytest.raises(AssertionError, match="only 2 replies were scripted"):
        await drain(model)


async def test_a_piece_of_the_wrong_type_is_named() -> None:
    with pytest.raises(TypeError, match="not int"):
        await drain(FunctionModel(lambda _request: [42]))


async def test_the_agent_loop_runs_on_it_without_a_server() -> None:
    def reply(request: ModelRequest) -> Any:
        last = request.messages[-1]
        if isinstance(last, ToolMessage):
            return f"The answer is {last.result.text}."
        return ToolCall(name="calculate", arguments={"expression": "15 + 27"})

    model = FunctionModel(reply)
    result = await Agent(model).run("15 + 27?")

    assert result.output == "The answer is 42."
    assert [type(m).__name__ for m in model.requests[1].messages[-2:]] == ["AssistantMessage", "ToolMessage"]
