"""`POST /v1/chat/completions` and `GET /v1/models`: any OpenAI client or chat UI, with MCP tools.

`model` names an agent. The whole tool loop runs here; the client gets the final answer, and (unless
`server.tool_activity` is false) each tool call as `reasoning_content`, which chat UIs show as thinking.
Calls that need approval are declined unless `server.auto_approve` is true: nobody can be asked.
Client `tools` are offered to the agent's model too; a call to one pauses the run and goes back to the
client, whose posted results resume it (`mixed`).

When `model` names a model and no agent, the request is passed through instead: the client's own tools
go to the model and its calls come back to the client (`passthrough`).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from toolbridge.agent import (
    AgentEvent,
    AgentStream,
    FinalEvent,
    ReasoningDeltaEvent,
    RunResult,
    StepStartedEvent,
    TextDeltaEvent,
    approve_all,
)
from toolbridge.errors import ToolbridgeError
from toolbridge.models import ModelSettings
from toolbridge.server._access import Caller, caller_of
from toolbridge.server._errors import (
    ApiError,
    api_error_response,
    error_body,
    model_failure,
    read_body,
)
from toolbridge.server._event_stream import EventStreamResponse
from toolbridge.server._limits import RUN_HOLD
from toolbridge.server._metering import MeteredModel, RunMeter
from toolbridge.server._state import ServerState
from toolbridge.server.openai.mixed import (
    check_resumable,
    client_tool_specs,
    paused_deltas,
    paused_message,
    restore_steps,
)
from toolbridge.server.openai.passthrough import pass_through
from toolbridge.server.openai.wire import (
    ChatCompletionRequest,
    CompletionIds,
    activity_line,
    read_conversation,
)
from toolbridge.telemetry import bind_log_context

__all__ = ["router"]

logger = logging.getLogger(__name__)

router = APIRouter(prefix="/v1")

_FINISH_REASONS = {
    "final_answer": "stop",
    "external_calls": "tool_calls",
    "max_steps": "length",
    "repeated_call": "length",
    "cancelled": "stop",
}


@router.get("/models")
async def list_models(request: Request) -> dict[str, Any]:
    state = ServerState.of(request)
    agents = await state.catalog.agents()
    models = [
        {"id": agent.name, "object": "model", "created": 0, "owned_by": "toolbridge"}
        for agent in agents
        if agent.problem is None
    ]
    # Then the models a request may pass through to; an agent of the same name wins.
    agent_names = {agent.name for agent in agents}
    models += [
        {"id": name, "object": "model", "created": 0, "owned_by": "toolbridge"}
        for name in state.catalog.model_names()
        if name not in agent_names
    ]
    # Beside the list OpenAI clients read, so one broken agent is reported without breaking them.
    invalid = [{"id": agent.name, "error": agent.problem} for agent in agents if agent.problem is not None]
    return {"object": "list", "data": models, **({"invalid_agents": invalid} if invalid else {})}


@router.post("/chat/completions", response_model=None)
async def chat_completions(request: Request) -> Response:
    body = await read_body(request, ChatCompletionRequest)
    state = ServerState.of(request)
    caller = caller_of(request)
    asked = body.max_completion_tokens or body.max_tokens or 0
    meter = await RunMeter.open(state.chats.limits, caller.name, caller.user_id, hold=max(RUN_HOLD, asked))
    try:
        answer = await _answer(body, state, caller, meter)
    except BaseException:
        await meter.close()
        raise
    return await _respond(_Metered(answer, meter), body)


async def _answer(
    body: ChatCompletionRequest, state: ServerState, caller: Caller, meter: RunMeter
) -> _Answer:
    """The request's answer, not yet told: a pass-through or an agent's run, its model's tokens charged
    to `meter` as each request to it completes."""
    if (model := await state.catalog.pass_through_model(body.model)) is not None:
        return await pass_through(
            body, MeteredModel(model, meter), repair_retries=state.settings.repair_retries
        )
    conversation = read_conversation(body)
    history = restore_steps(conversation.history)
    if conversation.prompt is None:
        check_resumable(history)
    definition = await state.catalog.definition(body.model, param="model")
    if conversation.instructions:
        joined = "\n\n".join(part for part in (definition.instructions, conversation.instructions) if part)
        definition = definition.model_copy(update={"instructions": joined})
    try:
        model = await state.catalog.model_for(definition)
    except ToolbridgeError as error:
        raise ApiError(503, f"agent {definition.name!r} has no usable model: {error}") from error

    # Nobody can be asked here: without an approver, calls that need approval are refused, and the
    # model is told so (rather than that the user said no).
    approve = approve_all if state.settings.auto_approve else None
    settings = ModelSettings(
        temperature=body.temperature, max_tokens=body.max_completion_tokens or body.max_tokens
    )
    # A request carries its whole conversation and nothing that names it: its cache is its own.
    agent = state.catalog.agent(
        MeteredModel(model, meter),
        definition,
        approve=approve,
        settings=settings,
        cache_scope=f"request {uuid.uuid4().hex}",
        user_id=caller.user_id,
    )
    external_tools = await client_tool_specs(body)
    events = agent.stream(conversation.prompt, history=history, external_tools=external_tools)
    return _Reply(events, CompletionIds(definition.name), show_activity=state.settings.tool_activity)


class _Answer(Protocol):
    """A reply told as chunks or as one completion: an agent's run, or a pass-through."""

    async def stream(
        self, send: Callable[[dict[str, Any]], Awaitable[None]], *, include_usage: bool
    ) -> None: ...

    async def whole(self) -> Response: ...


class _Metered:
    """An answer told with its run's meter in `RUN_METER` (for the tool calls it makes), which is
    closed once it has been told, however that ends."""

    def __init__(self, answer: _Answer, meter: RunMeter) -> None:
        self._answer = answer
        self._meter = meter

    async def stream(self, send: Callable[[dict[str, Any]], Awaitable[None]], *, include_usage: bool) -> None:
        try:
            with self._meter.running():
                await self._answer.stream(send, include_usage=include_usage)
        finally:
            await self._meter.close()

    async def whole(self) -> Response:
        try:
            with self._meter.running():
                return await self._answer.whole()
        finally:
            await self._meter.close()


async def _respond(answer: _Answer, body: ChatCompletionRequest) -> Response:
    if not body.stream:
        return await answer.whole()
    include_usage = body.stream_options is not None and body.stream_options.include_usage
    return EventStreamResponse(
        lambda sink: answer.stream(sink, include_usage=include_usage),
        refusal=api_error_response,
        failure=lambda message: (error_body(500, message, code="run_failed"), None),
        done=True,
    )


class _Reply:
    """One run, told as chunks (`stream`) or as one completion (`whole`)."""

    def __init__(self, stream: AgentStream, ids: CompletionIds, *, show_activity: bool) -> None:
        self._stream = stream
        self._ids = ids
        self._show_activity = show_activity
        self._text_so_far = False
        self._step_has_text = False

    async def _run(self, on_delta: Callable[[dict[str, str]], Awaitable[None]]) -> RunResult:
        """Run the agent, passing each `{"content"|"reasoning_content": text}` on; the run's result."""
        result: RunResult | None = None
        # The completion's id is the run's id in log lines (the endpoint keeps no chat).
        with bind_log_context(run_id=self._ids.id):
            async with self._stream as events:
                async for event in events:
                    if isinstance(event, FinalEvent):
                        result = event.result
                    elif delta := self._delta(event):
                        await on_delta(delta)
        assert result is not None, "a run that was not cancelled ends with a final event"
        return result

    def _delta(self, event: AgentEvent) -> dict[str, str] | None:
        if isinstance(event, StepStartedEvent):
            self._step_has_text = False
        elif isinstance(event, TextDeltaEvent):
            # Text from separate steps (a remark before a tool call, then the answer) stays apart.
            text = event.text if self._step_has_text or not self._text_so_far else "\n\n" + event.text
            self._step_has_text = self._text_so_far = True
            return {"content": text}
        elif isinstance(event, ReasoningDeltaEvent):
            return {"reasoning_content": event.text}
        elif self._show_activity and (line := activity_line(event)) is not None:
            return {"reasoning_content": line}
        return None

    async def stream(self, send: Callable[[dict[str, Any]], Awaitable[None]], *, include_usage: bool) -> None:
        """Chunks as `send(data)`. A model that fails before anything was sent raises `ApiError` (the
        response can still carry its status); after that it is an `{"error": ...}` object in the stream,
        as OpenAI's API does."""
        started = False

        async def send_delta(delta: dict[str, str]) -> None:
            nonlocal started
            if not started:
                started = True
                await send(self._ids.chunk({"role": "assistant", "content": ""}))
            await send(self._ids.chunk(delta))

        result = await self._run(send_delta)
        if result.stop_reason == "model_error":
            failure = model_failure(result.error, result.stop_detail)
            if not started:
                raise failure
            await send(error_body(failure.status, failure.message, code=failure.code))
            return
        if not started:
            await send(self._ids.chunk({"role": "assistant", "content": ""}))
        if result.stop_reason == "external_calls":
            for delta in paused_deltas(result, text_sent=self._text_so_far):
                await send(self._ids.chunk(delta))
        elif result.stop_reason != "final_answer":
            await send(self._ids.chunk({"content": _stop_note(result)}))
        await send(self._ids.chunk({}, _FINISH_REASONS.get(result.stop_reason, "stop")))
        if include_usage:
            await send(self._ids.usage_chunk(_usage(result)))

    async def whole(self) -> Response:
        reasoning: list[str] = []

        async def collect(delta: dict[str, str]) -> None:
            if "reasoning_content" in delta:
                reasoning.append(delta["reasoning_content"])

        result = await self._run(collect)
        if result.stop_reason == "model_error":
            raise model_failure(result.error, result.stop_detail)
        content = result.output if result.stop_reason == "final_answer" else _stop_note(result)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if result.stop_reason == "external_calls":
            message.update(paused_message(result))
        if reasoning:
            message["reasoning_content"] = "".join(reasoning)
        finish_reason = _FINISH_REASONS.get(result.stop_reason, "stop")
        return JSONResponse(self._ids.completion(message, finish_reason, _usage(result)))


def _stop_note(result: RunResult) -> str:
    return f"[stopped: {result.stop_detail}]"


def _usage(result: RunResult) -> dict[str, int]:
    used = result.usage
    return {
        "prompt_tokens": used.input_tokens,
        "completion_tokens": used.output_tokens,
        "total_tokens": used.input_tokens + used.output_tokens,
    }
