"""Pass-through: `model` names a model, and the client brings its own `tools` and runs them itself.

toolbridge sends the client's conversation and tools to the model through the models layer (natively,
or in prompt mode with the catalog in the system prompt and the calls read from the text in any
dialect) and answers with the reply's calls as OpenAI `tool_calls`. On the way it makes them right:

- calls naming no tool of the request, or breaking its schema, are shown to the model with the problem
  and asked for again, up to `server.repair_retries` times; then returned as they are;
- `tool_choice` `required` or a named function: a reply without that call is asked for once more,
  then a 502 (a native API never answers without the call it was told to make); with a named
  function, calls of other tools beside it are dropped, as a native API makes none;
- `parallel_tool_calls: false` keeps the first call only.

Text and reasoning stream as the model writes them; the calls follow once they are checked. A reply
asked for again shows its text only where the first showed none, so the client never sees it twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from fastapi.responses import JSONResponse, Response

from toolbridge.errors import ModelError
from toolbridge.models import (
    CollectedCall,
    Finish,
    InvalidToolCall,
    ModelRequest,
    NamedTool,
    ReasoningDelta,
    TextDelta,
    ToolCallCollector,
    ToolCallDelta,
    ToolCallingModel,
    UsageReport,
)
from toolbridge.server._errors import error_body, model_failure
from toolbridge.server._metering import RunMeter
from toolbridge.server.openai.call_checks import (
    CheckedCall,
    check_call,
    choice_correction,
    follows_choice,
    repair_turn,
)
from toolbridge.server.openai.passthrough_wire import (
    tool_call_deltas,
    tool_calls_wire,
)
from toolbridge.server.openai.wire import CompletionIds
from toolbridge.telemetry import trace_model_request
from toolbridge.types import AssistantMessage, Message, ToolCall, Usage

__all__ = [
    "Answered",
    "Answerer",
    "MeteredAnswer",
    "PassThrough",
    "Shown",
    "stream_completion",
    "whole_completion",
]

logger = logging.getLogger(__name__)

Send = Callable[[dict[str, Any]], Awaitable[None]]
DeltaSink = Callable[[dict[str, str]], Awaitable[None]]

_FINISH_REASONS = {"length": "length", "max_tokens": "length", "content_filter": "content_filter"}


@dataclass
class _Attempt:
    """One reply of the model, read whole."""

    content: str = ""
    reasoning: str = ""
    checked: list[CheckedCall] = field(default_factory=list)
    invalid: list[InvalidToolCall] = field(default_factory=list)
    finish_reason: str | None = None

    @property
    def calls(self) -> list[ToolCall]:
        return [item.call for item in self.checked]

    @property
    def has_problems(self) -> bool:
        return bool(self.invalid) or any(item.problem is not None for item in self.checked)


@dataclass
class Answered:
    """What a pass-through request came to, once its text was shown: the checked calls, why it stopped
    (OpenAI's `finish_reason`: `tool_calls`, `stop`, `length`, `content_filter`) and the tokens used."""

    calls: list[ToolCall]
    finish_reason: str
    usage: Usage


class Shown:
    """The text and reasoning an answer showed, collected (`await answerer.answer(shown)`), for a reply
    told whole."""

    def __init__(self) -> None:
        self._parts: dict[str, list[str]] = {"content": [], "reasoning_content": []}

    async def __call__(self, delta: dict[str, str]) -> None:
        for key, text in delta.items():
            self._parts[key].append(text)

    @property
    def text(self) -> str:
        return "".join(self._parts["content"])

    @property
    def reasoning(self) -> str:
        return "".join(self._parts["reasoning_content"])


class Answerer(Protocol):
    """What every API surface tells: a pass-through, or an agent's run (`agent_answer`)."""

    async def answer(self, show: DeltaSink) -> Answered:
        """Show the text and reasoning as they come (`{"content"|"reasoning_content": text}`) and return
        the calls for the client; a model's failure raises `ModelError`."""
        ...


async def stream_completion(
    answerer: Answerer, ids: CompletionIds, send: Send, *, include_usage: bool
) -> None:
    """The answer as chat completion chunks, each `send(data)`. A model that fails before anything was
    sent raises `ApiError`; after that its error is an `{"error": ...}` object in the stream."""
    started = False

    async def start(content: str | None = "") -> None:
        nonlocal started
        if not started:
            started = True
            await send(ids.chunk({"role": "assistant", "content": content}))

    async def send_delta(delta: dict[str, str]) -> None:
        await start()
        await send(ids.chunk(delta))

    try:
        answer = await answerer.answer(send_delta)
    except ModelError as error:
        failure = model_failure(error, str(error))
        if not started:
            raise failure from error
        await send(error_body(failure.status, failure.message, code=failure.code))
        return
    await start(None if answer.calls else "")  # calls and no text: `content` is null, as OpenAI sends it
    for index, call in enumerate(answer.calls):
        for piece in tool_call_deltas(index, call):
            await send(ids.chunk({"tool_calls": [piece]}))
    await send(ids.chunk({}, answer.finish_reason))
    if include_usage:
        await send(ids.usage_chunk(_usage_wire(answer.usage)))


async def whole_completion(answerer: Answerer, ids: CompletionIds) -> Response:
    """The answer as one chat completion."""
    shown = Shown()
    try:
        answer = await answerer.answer(shown)
    except ModelError as error:
        raise model_failure(error, str(error)) from error
    message: dict[str, Any] = {"role": "assistant", "content": shown.text or (None if answer.calls else "")}
    if shown.reasoning:
        message["reasoning_content"] = shown.reasoning
    if answer.calls:
        message["tool_calls"] = tool_calls_wire(answer.calls)
    usage = _usage_wire(answer.usage)
    return JSONResponse(ids.completion(message, answer.finish_reason, usage))


class MeteredAnswer:
    """An answer told with its run's meter in `RUN_METER` (for the tool calls it makes), which is
    closed once it has been told, however that ends."""

    def __init__(self, answerer: Answerer, meter: RunMeter) -> None:
        self._answerer = answerer
        self._meter = meter

    async def answer(self, show: DeltaSink) -> Answered:
        try:
            with self._meter.running():
                return await self._answerer.answer(show)
        finally:
            await self._meter.close()


class PassThrough:
    """One pass-through request: `answer` it, and tell the answer in an API's terms (chat completions:
    `stream_completion`, `whole_completion`)."""

    def __init__(
        self,
        model: ToolCallingModel,
        request: ModelRequest,
        *,
        repair_retries: int,
    ) -> None:
        self._model = model
        self._request = request
        self._repairs_left = repair_retries
        self._shown: set[str] = set()
        """The delta fields ("content", "reasoning_content") an earlier attempt already showed."""
        self._usage = Usage()

    # -- the attempts -----------------------------------------------------------------------------------

    async def answer(self, show: DeltaSink) -> Answered:
        """Ask the model, and again while its reply needs correcting and retries are left; the text and
        reasoning are shown as they come, as `{"content": text}` or `{"reasoning_content": text}`. A
        model's failure raises `ModelError`."""
        messages: list[Message] = list(self._request.messages)
        choice = self._request.settings.tool_choice
        choice_retried = False
        while True:
            attempt = await self._attempt(messages, show)
            if attempt.has_problems and self._repairs_left > 0:
                self._repairs_left -= 1
                messages += repair_turn(attempt.content, attempt.reasoning, attempt.checked, attempt.invalid)
            elif not follows_choice(attempt.calls, choice) and not choice_retried:
                assert choice is not None
                choice_retried = True
                messages += choice_correction(attempt.content, attempt.reasoning, attempt.calls, choice)
            else:
                calls = attempt.calls
                if choice is not None and attempt.finish_reason != "length":
                    # Cut off at the token limit, a reply is answered as it is, as a native API does.
                    calls = self._chosen_calls(attempt, choice)
                return Answered(calls, self._finish_reason(attempt), self._usage)

    def _chosen_calls(self, attempt: _Attempt, choice: Literal["required"] | NamedTool) -> list[ToolCall]:
        """The calls of a reply that `tool_choice` asked a call of, asked twice: only those of the named
        tool; a ModelError if it still did not make the call."""
        if not follows_choice(attempt.calls, choice):
            wanted = f"the tool {choice.name!r}" if isinstance(choice, NamedTool) else "a tool"
            made = ", ".join(repr(call.name) for call in attempt.calls)
            answered = f"it called {made}" if made else f"it answered {_preview(attempt.content)!r}"
            raise ModelError(
                f"{self._model.name} did not call {wanted} as tool_choice requires, even when asked "
                f"again ({answered}). Retry, or use a model with native function calling (tool_mode "
                '"native"), whose API enforces tool_choice.',
                model=self._model.name,
            )
        if isinstance(choice, NamedTool):
            return [call for call in attempt.calls if call.name == choice.name]
        return attempt.calls

    async def _attempt(self, messages: Sequence[Message], show: DeltaSink) -> _Attempt:
        """One reply: its text and reasoning shown as they come (see `_shown`), its calls checked."""
        attempt = _Attempt()
        content: list[str] = []
        reasoning: list[str] = []
        collector = ToolCallCollector()
        live = {key for key in ("content", "reasoning_content") if key not in self._shown}
        request = ModelRequest(messages=messages, tools=self._request.tools, settings=self._request.settings)
        used_before = self._usage
        with trace_model_request(self._model.name) as traced:
            async with self._model.stream(request) as events:
                async for event in events:
                    if isinstance(event, TextDelta | ReasoningDelta):
                        key = "content" if isinstance(event, TextDelta) else "reasoning_content"
                        (content if key == "content" else reasoning).append(event.text)
                        if key in live and event.text:
                            self._shown.add(key)
                            await show({key: event.text})
                    elif isinstance(event, ToolCallDelta):
                        collector.add(event)
                    elif isinstance(event, InvalidToolCall):
                        attempt.invalid.append(event)
                    elif isinstance(event, Finish):
                        attempt.finish_reason = event.reason
                    elif isinstance(event, UsageReport):
                        self._usage = self._usage + event.usage
            used = Usage(
                input_tokens=self._usage.input_tokens - used_before.input_tokens,
                output_tokens=self._usage.output_tokens - used_before.output_tokens,
            )
            traced.finish(
                attempt.finish_reason, input_tokens=used.input_tokens, output_tokens=used.output_tokens
            )
        attempt.content = "".join(content)
        attempt.reasoning = "".join(reasoning)
        self._check(attempt, collector.calls(truncated=attempt.finish_reason == "length"), messages)
        return attempt

    def _check(self, attempt: _Attempt, collected: list[CollectedCall], messages: Sequence[Message]) -> None:
        """The reply's calls (only the first, without parallel calls) checked against the client's tools."""
        if self._request.settings.parallel_tool_calls is False and (collected or attempt.invalid):
            # The first call the model made (a readable one before an unreadable one).
            collected, attempt.invalid = (collected[:1], []) if collected else ([], attempt.invalid[:1])
        used = {
            call.id
            for message in messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls
        }
        tools = self._request.tools
        attempt.checked = [check_call(_unique(item.call, used), tools, item.problem) for item in collected]
        if attempt.has_problems:
            problems = [item.problem for item in attempt.checked if item.problem]
            problems += [item.message for item in attempt.invalid]
            logger.info(
                "model %s wrote calls the client's tools do not take: %s",
                self._model.name,
                "; ".join(problems),
            )

    @staticmethod
    def _finish_reason(attempt: _Attempt) -> str:
        if attempt.calls:
            return "tool_calls"
        return _FINISH_REASONS.get(attempt.finish_reason or "", "stop")


def _preview(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unique(call: ToolCall, used: set[str]) -> ToolCall:
    """`call`, with a new id if the conversation already has its id: models (and servers) reuse ids
    like `call_0`, and the client matches results to calls by id."""
    if call.id in used:
        call = call.model_copy(update={"id": ToolCall(name=call.name).id})
    used.add(call.id)
    return call


def _usage_wire(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }
