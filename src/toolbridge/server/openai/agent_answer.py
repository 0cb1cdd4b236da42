"""An agent's run answered as a pass-through is answered, so every API surface serves an agent as it serves
a model (`/v1/chat/completions`, `/v1/messages`, `/v1/responses`): `model` names the agent, whose own tools
run here, and the client's tools are offered beside them (`mixed`).

What the run shows comes as the same deltas a pass-through shows: its text as `content`, the model's
reasoning and (unless `server.tool_activity` is false) each tool call's activity as `reasoning_content`.
The answer's calls are the client's calls the run paused for; the record of the run's own steps ends its
text, for the client to send back with the rest of the conversation.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

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
from toolbridge.errors import ModelError, ToolbridgeError
from toolbridge.models import ModelRequest, ModelSettings, tool_calling_model
from toolbridge.server._access import Caller
from toolbridge.server._errors import ApiError
from toolbridge.server._metering import MeteredModel, RunMeter
from toolbridge.server._state import ServerState
from toolbridge.server.openai.mixed import CLIENT_SOURCE, check_resumable, restore_steps, steps_record
from toolbridge.server.openai.passthrough import Answered, Answerer, DeltaSink, PassThrough
from toolbridge.server.openai.wire import activity_line
from toolbridge.telemetry import bind_log_context
from toolbridge.types import ContentPart, Message, SystemMessage, ToolMessage, ToolSpec, UserMessage

__all__ = ["AgentAnswer", "start_agent", "start_answer"]

_FINISH_REASONS = {
    "final_answer": "stop",
    "external_calls": "tool_calls",
    "max_steps": "length",
    "repeated_call": "length",
    "cancelled": "stop",
}


@dataclass(frozen=True)
class ApiRequest:
    """A request to any of the APIs, read into our terms."""

    name: str
    """The `model` it names: a model of the config (pass-through) or an agent."""
    messages: Sequence[Message]
    client_tools: Sequence[ToolSpec]
    settings: ModelSettings
    run_id: str
    """The response's id, the run's id in log lines."""
    param: str
    """The request's conversation field, for errors (`messages`, `input`)."""


async def start_answer(state: ServerState, caller: Caller, meter: RunMeter, request: ApiRequest) -> Answerer:
    """The answer to `request`: a pass-through when it names a model, else the agent's run
    (`start_agent`), its model's tokens charged to `meter`."""
    model = await state.catalog.pass_through_model(request.name)
    if model is None:
        return await start_agent(state, caller, meter, request)
    calling = tool_calling_model(MeteredModel(model, meter))
    await calling.prepare()
    asked = ModelRequest(
        messages=list(request.messages), tools=list(request.client_tools), settings=request.settings
    )
    return PassThrough(calling, asked, repair_retries=state.settings.repair_retries)


async def start_agent(
    state: ServerState, caller: Caller, meter: RunMeter, request: ApiRequest
) -> AgentAnswer:
    """The run of the agent `request` names on the client's conversation, ready to be answered. The
    conversation ends with the user's prompt, or with results of the client's tools that resume a paused
    run; the client's system text is added to the agent's instructions."""
    name, settings = request.name, request.settings
    instructions, history, prompt, attachments = _split(request.messages, request.param)
    history = restore_steps(history)
    if prompt is None:
        check_resumable(history)
    definition = await state.catalog.definition(name, param="model")
    if instructions:
        joined = "\n\n".join(part for part in (definition.instructions, instructions) if part)
        definition = definition.model_copy(update={"instructions": joined})
    try:
        model = await state.catalog.model_for(definition)
    except ToolbridgeError as error:
        raise ApiError(503, f"agent {definition.name!r} has no usable model: {error}") from error
    agent = state.catalog.agent(
        MeteredModel(model, meter),
        definition,
        # Nobody can be asked here: without an approver, calls that need approval are refused, and the
        # model is told so (rather than that the user said no).
        approve=approve_all if state.settings.auto_approve else None,
        # The client's tool_choice is about its own tools: the agent's run decides for itself.
        settings=ModelSettings(temperature=settings.temperature, max_tokens=settings.max_tokens),
        # A request carries its whole conversation and nothing that names it: its cache is its own.
        cache_scope=f"request {uuid.uuid4().hex}",
        user_id=caller.user_id,
    )
    external = [tool.model_copy(update={"source": CLIENT_SOURCE}) for tool in request.client_tools]
    events = agent.stream(prompt, history=history, attachments=attachments, external_tools=external)
    return AgentAnswer(events, request.run_id, show_activity=state.settings.tool_activity)


def _split(
    messages: Sequence[Message], param: str
) -> tuple[str, list[Message], str | None, list[ContentPart]]:
    """The client's system text, the history, and the prompt with its attachments (None: the
    conversation ends with tool results)."""
    system = [message.content for message in messages if isinstance(message, SystemMessage)]
    rest: list[Message] = [message for message in messages if not isinstance(message, SystemMessage)]
    last = rest[-1] if rest else None
    if isinstance(last, UserMessage):
        return "\n\n".join(system), rest[:-1], last.content, list(last.attachments)
    if isinstance(last, ToolMessage):
        return "\n\n".join(system), rest, None, []
    whose = "the assistant's" if last is not None else "missing"
    raise ApiError(
        400,
        f"the last message must be the user's, or results of your tools (it is {whose}): the agent "
        "answers it, running its own tools itself",
        param=param,
    )


class AgentAnswer:
    """One agent run, answered as `PassThrough.answer` answers: see the module's docstring."""

    def __init__(self, stream: AgentStream, run_id: str, *, show_activity: bool) -> None:
        self._stream = stream
        self._run_id = run_id
        self._show_activity = show_activity
        self._text_so_far = False
        self._step_has_text = False

    async def answer(self, show: DeltaSink) -> Answered:
        """Run the agent, showing what it does; a model's failure raises `ModelError`."""
        result: RunResult | None = None
        # The response's id is the run's id in log lines (the endpoint keeps no chat).
        with bind_log_context(run_id=self._run_id):
            async with self._stream as events:
                async for event in events:
                    if isinstance(event, FinalEvent):
                        result = event.result
                    elif delta := self._delta(event):
                        await show(delta)
        assert result is not None, "a run that was not cancelled ends with a final event"
        if result.stop_reason == "model_error":
            raise result.error or ModelError(result.stop_detail, model="")
        if result.stop_reason == "external_calls":
            await show(self._text(steps_record(result), apart=True))
            return Answered(result.pending_calls, "tool_calls", result.usage)
        if result.stop_reason != "final_answer":
            await show(self._text(f"[stopped: {result.stop_detail}]", apart=True))
        return Answered([], _FINISH_REASONS.get(result.stop_reason, "stop"), result.usage)

    def _delta(self, event: AgentEvent) -> dict[str, str] | None:
        if isinstance(event, StepStartedEvent):
            self._step_has_text = False
        elif isinstance(event, TextDeltaEvent):
            delta = self._text(event.text)
            self._step_has_text = True
            return delta
        elif isinstance(event, ReasoningDeltaEvent):
            return {"reasoning_content": event.text}
        elif self._show_activity and (line := activity_line(event)) is not None:
            return {"reasoning_content": line}
        return None

    def _text(self, text: str, *, apart: bool = False) -> dict[str, str]:
        """`text` as a content delta: text from separate steps (a remark before a tool call, then the
        answer) stays apart, as does an `apart` one from all text before it."""
        if self._text_so_far and (apart or not self._step_has_text):
            text = "\n\n" + text
        self._text_so_far = self._step_has_text = True
        return {"content": text}
