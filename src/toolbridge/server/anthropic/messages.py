"""`POST /v1/messages`: Anthropic's Messages API in front of any configured model (Claude Code, the
`anthropic` SDK), passed through as `/v1/chat/completions` passes a model through: the client's tools go
to the model (natively, or in the prompt with its calls read from the text in any dialect), and the calls
come back as `tool_use` blocks, checked against the client's tools and asked for again when broken.

Answers and stream events are the `anthropic` SDK's own models (`Message`, `RawMessageStartEvent`, ...);
errors are in Anthropic's shape, `{"type": "error", "error": {"type": ..., "message": ...}}`. `model`
names a model of the config, or an agent, whose run offers the client's tools beside its own
(`agent_answer`). `POST /v1/messages/count_tokens` estimates.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from anthropic.types import (
    InputJSONDelta,
    Message,
    MessageDeltaUsage,
    RawContentBlockDeltaEvent,
    RawContentBlockStartEvent,
    RawContentBlockStopEvent,
    RawMessageDeltaEvent,
    RawMessageStartEvent,
    RawMessageStopEvent,
    SignatureDelta,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolUseBlock,
    Usage,
)
from anthropic.types.raw_message_delta_event import Delta
from fastapi import Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel

from toolbridge.errors import ModelError
from toolbridge.server._access import caller_of
from toolbridge.server._errors import (
    ApiError,
    anthropic_error_body,
    model_failure,
    read_body,
)
from toolbridge.server._event_stream import EventSink, EventStreamResponse
from toolbridge.server._limits import RUN_HOLD
from toolbridge.server._metering import RunMeter
from toolbridge.server._state import ServerState
from toolbridge.server.anthropic.wire import (
    MessagesRequest,
    message_id,
    read_messages,
    read_settings,
    read_tools,
    stop_reason,
    tool_input_json,
)
from toolbridge.server.openai.agent_answer import ApiRequest, start_answer
from toolbridge.server.openai.passthrough import Answered, Answerer, MeteredAnswer, Shown
from toolbridge.types import ToolCall

__all__ = ["count_tokens", "messages"]


def _error_response(error: ApiError) -> JSONResponse:
    return JSONResponse(
        anthropic_error_body(error.status, error.message), status_code=error.status, headers=error.headers
    )


async def messages(request: Request) -> Response:
    try:
        body = await read_body(request, MessagesRequest)
        state = ServerState.of(request)
        tools = await read_tools(body)
        settings = read_settings(body, tools)
        conversation = read_messages(body)
    except ApiError as error:
        return _error_response(error)
    caller = caller_of(request)
    meter = await RunMeter.open(
        state.chats.limits, caller.name, caller.user_id, hold=max(RUN_HOLD, body.max_tokens)
    )
    reply_id = message_id()
    try:
        answerer = await start_answer(
            state,
            caller,
            meter,
            ApiRequest(
                body.model,
                conversation,
                tools,
                settings,
                run_id=reply_id,
                param="messages",
            ),
        )
    except ApiError as error:
        await meter.close()
        return _error_response(error)
    except BaseException:
        await meter.close()
        raise
    reply = _Reply(MeteredAnswer(answerer, meter), body.model, reply_id)
    if body.stream:
        return EventStreamResponse(
            reply.stream,
            refusal=_error_response,
            failure=lambda message: (anthropic_error_body(500, message), "error"),
            done=False,
        )
    try:
        return JSONResponse(await reply.whole())
    except ApiError as error:
        return _error_response(error)


class _CountTokens(BaseModel):
    model: str
    messages: list[dict[str, Any]]
    system: Any = None
    tools: list[dict[str, Any]] | None = None


async def count_tokens(request: Request) -> Response:
    """An estimate (four characters a token): what a client checks before sending, not a bill."""
    try:
        body = await read_body(request, _CountTokens)
    except ApiError as error:
        return _error_response(error)
    return JSONResponse({"input_tokens": len(body.model_dump_json()) // 4})


class _Reply:
    """One answer (a pass-through or an agent's run) told in the Messages API's terms."""

    def __init__(self, answerer: Answerer, model: str, reply_id: str) -> None:
        self._answerer = answerer
        self._model = model
        self._id = reply_id

    async def whole(self) -> dict[str, Any]:
        shown = Shown()
        answered = await self._answer(shown)
        content: list[Any] = []
        if shown.reasoning:
            content.append(ThinkingBlock(type="thinking", thinking=shown.reasoning, signature=""))
        if shown.text:
            content.append(TextBlock(type="text", text=shown.text))
        content += [_tool_use(call) for call in answered.calls]
        message = Message(
            id=self._id,
            type="message",
            role="assistant",
            model=self._model,
            content=content,
            stop_reason=stop_reason(answered.finish_reason),
            stop_sequence=None,
            usage=Usage(input_tokens=answered.usage.input_tokens, output_tokens=answered.usage.output_tokens),
        )
        return message.model_dump(mode="json", exclude_none=True)

    async def stream(self, sink: EventSink) -> None:
        """The events into `sink`, each named by its type; a model failing before any was sent raises
        `ApiError`."""

        async def send(event: BaseModel) -> None:
            await sink(event.model_dump(mode="json", exclude_none=True), event=getattr(event, "type", None))

        blocks = _Blocks(send)
        started = False

        async def start() -> None:
            nonlocal started
            if not started:
                started = True
                empty = Message(
                    id=self._id,
                    type="message",
                    role="assistant",
                    model=self._model,
                    content=[],
                    stop_reason=None,
                    stop_sequence=None,
                    usage=Usage(input_tokens=0, output_tokens=0),
                )
                await send(RawMessageStartEvent(type="message_start", message=empty))

        async def show(delta: dict[str, str]) -> None:
            await start()
            for key, text in delta.items():
                await blocks.text(key == "reasoning_content", text)

        try:
            answered = await self._answer(show)
        except ApiError as error:
            if not started:
                raise
            await sink(anthropic_error_body(error.status, error.message), event="error")
            return
        await start()
        await blocks.close()
        for call in answered.calls:
            await blocks.tool_use(call)
        usage = MessageDeltaUsage(
            output_tokens=answered.usage.output_tokens, input_tokens=answered.usage.input_tokens
        )
        delta = Delta(stop_reason=stop_reason(answered.finish_reason), stop_sequence=None)
        await send(RawMessageDeltaEvent(type="message_delta", delta=delta, usage=usage))
        await send(RawMessageStopEvent(type="message_stop"))

    async def _answer(self, show: Any) -> Answered:
        try:
            return await self._answerer.answer(show)
        except ModelError as error:
            raise model_failure(error, str(error)) from error


_Sender = Callable[[BaseModel], Awaitable[None]]
"""`send(event)`: one stream event, an SDK model."""


class _Blocks:
    """The content blocks of a streamed message, numbered in order: a thinking or text block is opened
    when its kind of text comes and closed when the other kind does; tool calls follow, whole."""

    def __init__(self, send: _Sender) -> None:
        self._send = send
        self._index = -1
        self._open: bool | None = None
        """Whether the open block is thinking (None: none is open)."""

    async def text(self, thinking: bool, text: str) -> None:
        if self._open is not thinking:
            await self.close()
            self._index += 1
            self._open = thinking
            block: Any = (
                ThinkingBlock(type="thinking", thinking="", signature="")
                if thinking
                else TextBlock(type="text", text="")
            )
            await self._send(
                RawContentBlockStartEvent(type="content_block_start", index=self._index, content_block=block)
            )
        delta: Any = (
            ThinkingDelta(type="thinking_delta", thinking=text)
            if thinking
            else TextDelta(type="text_delta", text=text)
        )
        await self._send(
            RawContentBlockDeltaEvent(type="content_block_delta", index=self._index, delta=delta)
        )

    async def close(self) -> None:
        if self._open is None:
            return
        if self._open:  # a thinking block ends with its signature (none: the model is not Claude)
            signed = SignatureDelta(type="signature_delta", signature="")
            await self._send(
                RawContentBlockDeltaEvent(type="content_block_delta", index=self._index, delta=signed)
            )
        await self._send(RawContentBlockStopEvent(type="content_block_stop", index=self._index))
        self._open = None

    async def tool_use(self, call: ToolCall) -> None:
        self._index += 1
        start = ToolUseBlock(type="tool_use", id=call.id, name=call.name, input={})
        await self._send(
            RawContentBlockStartEvent(type="content_block_start", index=self._index, content_block=start)
        )
        arguments = InputJSONDelta(type="input_json_delta", partial_json=tool_input_json(call))
        await self._send(
            RawContentBlockDeltaEvent(type="content_block_delta", index=self._index, delta=arguments)
        )
        await self._send(RawContentBlockStopEvent(type="content_block_stop", index=self._index))


def _tool_use(call: ToolCall) -> ToolUseBlock:
    return ToolUseBlock(type="tool_use", id=call.id, name=call.name, input=call.arguments)
