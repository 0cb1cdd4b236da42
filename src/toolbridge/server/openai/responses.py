"""`POST /v1/responses`: OpenAI's Responses API in front of any configured model (Codex, the `openai`
SDK's `responses`), passed through as `/v1/chat/completions` passes a model through: the client's function
tools go to the model (natively, or in the prompt with its calls read from the text in any dialect), and
the calls come back as `function_call` output items, checked against the client's tools and asked for
again when broken.

Answers and stream events are the `openai` SDK's own models (`Response`, `ResponseOutputItemAddedEvent`,
...); errors are OpenAI's shape. `model` names a model of the config, or an agent, whose run offers the
client's tools beside its own (`agent_answer`). Unless a request says `store: false` (Codex does, and
sends the whole conversation each time), its response is stored with the conversation it ends, and a
later request may name it as `previous_response_id` and send only what is new (`store.responses`).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import anyio.to_thread
from fastapi import Request
from fastapi.responses import JSONResponse, Response
from openai.types.responses import (
    Response as ResponseObject,
)
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
    ResponseReasoningTextDeltaEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
    ResponseUsage,
)
from openai.types.responses.response_reasoning_item import Content as ReasoningText
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
from pydantic import BaseModel

from toolbridge.errors import ModelError
from toolbridge.server._access import Caller, caller_of
from toolbridge.server._errors import (
    ApiError,
    api_error_response,
    error_body,
    model_failure,
    read_body,
)
from toolbridge.server._event_stream import EventSink, EventStreamResponse
from toolbridge.server._limits import RUN_HOLD
from toolbridge.server._metering import RunMeter
from toolbridge.server._state import ServerState
from toolbridge.server.openai.agent_answer import ApiRequest, start_answer
from toolbridge.server.openai.passthrough import Answered, Answerer, DeltaSink, MeteredAnswer, Shown
from toolbridge.server.openai.responses_wire import ResponsesRequest, read_input, read_settings, read_tools
from toolbridge.store.responses import KEPT_FOR
from toolbridge.types import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, Usage

__all__ = ["responses"]


async def responses(request: Request) -> Response:
    body = await read_body(request, ResponsesRequest)
    state = ServerState.of(request)
    tools = await read_tools(body)
    settings = read_settings(body, tools)
    caller = caller_of(request)
    conversation = await _with_previous(state, caller, body, read_input(body))
    meter = await RunMeter.open(
        state.chats.limits, caller.name, caller.user_id, hold=max(RUN_HOLD, body.max_output_tokens or 0)
    )
    response_id = f"resp_{uuid.uuid4().hex}"
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
                run_id=response_id,
                param="input",
            ),
        )
    except BaseException:
        await meter.close()
        raise
    keep: Keep | None = None
    if body.store is not False:

        async def keep(reply: AssistantMessage) -> None:
            said = [message for message in conversation if not isinstance(message, SystemMessage)]
            archive = state.store.responses
            await anyio.to_thread.run_sync(archive.keep, response_id, caller.user_id, [*said, reply])

    reply = _Reply(MeteredAnswer(answerer, meter), body, response_id, keep=keep)
    if body.stream:
        return EventStreamResponse(
            reply.stream,
            refusal=api_error_response,
            failure=lambda message: (_error_event(error_body(500, message)), "error"),
            done=False,
        )
    return JSONResponse(await reply.whole())


async def _with_previous(
    state: ServerState, caller: Caller, body: ResponsesRequest, conversation: list[Message]
) -> list[Message]:
    """`conversation` after the one `previous_response_id` ends (its instructions are not carried over:
    this request's system message stays first)."""
    if not body.previous_response_id:
        return conversation
    earlier = await anyio.to_thread.run_sync(
        state.store.responses.find, body.previous_response_id, caller.user_id
    )
    if earlier is None:
        raise ApiError(
            404,
            f"no stored response {body.previous_response_id!r}: responses are kept for "
            f"{KEPT_FOR.days} days, for the user who made them, and only when the request did not say "
            "`store: false`; send the whole conversation in `input` instead",
            param="previous_response_id",
        )
    system = [message for message in conversation if isinstance(message, SystemMessage)]
    # Outputs of calls made in the earlier turns get their tool's name, as when the calls are sent.
    names = {
        call.id: call.name
        for message in earlier
        if isinstance(message, AssistantMessage)
        for call in message.tool_calls
    }
    rest = [
        message.model_copy(update={"name": names[message.result.call_id]})
        if isinstance(message, ToolMessage) and message.result.call_id in names
        else message
        for message in conversation
        if not isinstance(message, SystemMessage)
    ]
    return [*system, *earlier, *rest]


Keep = Callable[[AssistantMessage], Awaitable[None]]
"""`keep(reply)`: store the response, its reply ending the conversation."""


class _Reply:
    """One answer (a pass-through or an agent's run) told in the Responses API's terms."""

    def __init__(
        self, answerer: Answerer, request: ResponsesRequest, response_id: str, *, keep: Keep | None
    ) -> None:
        self._answerer = answerer
        self._request = request
        self._id = response_id
        self._created = int(time.time())
        self._keep = keep

    def _response(self, output: list[Any], status: str, usage: Usage | None) -> ResponseObject:
        return ResponseObject(
            id=self._id,
            object="response",
            created_at=self._created,
            model=self._request.model,
            status=status,
            output=output,
            parallel_tool_calls=self._request.parallel_tool_calls is not False,
            tool_choice="auto",
            tools=[],
            usage=_usage(usage) if usage is not None else None,
            previous_response_id=self._request.previous_response_id,
            store=self._keep is not None,
        )

    async def whole(self) -> dict[str, Any]:
        answered, shown = await self._answer(None)
        output: list[Any] = []
        if shown.reasoning:
            output.append(_reasoning(shown.reasoning))
        if shown.text:
            output.append(_message(shown.text))
        output += [_function_call(call) for call in answered.calls]
        return self._response(output, "completed", answered.usage).model_dump(mode="json", exclude_none=True)

    async def stream(self, sink: EventSink) -> None:
        """The events into `sink`, each named by its type; a model failing before any was sent raises
        `ApiError`."""

        async def send(event: BaseModel) -> None:
            await sink(event.model_dump(mode="json", exclude_none=True), event=getattr(event, "type", None))

        items = _Items(send)
        started = False

        async def start() -> None:
            nonlocal started
            if not started:
                started = True
                await items.event(ResponseCreatedEvent, response=self._response([], "in_progress", None))

        async def show(delta: dict[str, str]) -> None:
            await start()
            for key, text in delta.items():
                await items.text(key == "reasoning_content", text)

        try:
            answered, _ = await self._answer(show)
        except ApiError as error:
            if not started:
                raise
            await sink(_error_event(error_body(error.status, error.message, code=error.code)), event="error")
            return
        await start()
        await items.close()
        for call in answered.calls:
            await items.function_call(call)
        done = self._response(items.done, "completed", answered.usage)
        await items.event(ResponseCompletedEvent, response=done)

    async def _answer(self, show: DeltaSink | None) -> tuple[Answered, Shown]:
        """The answer and what it showed, shown through `show` as it comes, and stored (before the client
        hears it is done, so the next request can name it)."""
        shown = Shown()

        async def noting(delta: dict[str, str]) -> None:
            await shown(delta)
            if show is not None:
                await show(delta)

        try:
            answered = await self._answerer.answer(noting)
        except ModelError as error:
            raise model_failure(error, str(error)) from error
        if self._keep is not None:
            reply = AssistantMessage(content=shown.text, reasoning=shown.reasoning, tool_calls=answered.calls)
            await self._keep(reply)
        return answered, shown


class _Items:
    """The output items of a streamed response in order, each event numbered: a reasoning or message item
    is opened when its kind of text comes and closed when the other kind does; calls follow, whole."""

    def __init__(self, send: Any) -> None:
        self._send = send
        self._number = 0
        self.done: list[Any] = []
        """The items finished so far (what `response.completed` lists)."""
        self._open: bool | None = None
        """Whether the open item is reasoning (None: none is open)."""
        self._id = ""
        self._text: list[str] = []

    async def event(self, kind: Any, **fields: Any) -> None:
        event = kind(type=_type_of(kind), sequence_number=self._number, **fields)
        self._number += 1
        await self._send(event)

    async def text(self, reasoning: bool, text: str) -> None:
        index = len(self.done)
        if self._open is not reasoning:
            await self.close()
            index = len(self.done)
            self._open = reasoning
            self._id = f"{'rs' if reasoning else 'msg'}_{uuid.uuid4().hex}"
            self._text = []
            item: Any = (
                ResponseReasoningItem(
                    id=self._id, type="reasoning", summary=[], content=[], status="in_progress"
                )
                if reasoning
                else ResponseOutputMessage(
                    id=self._id, type="message", role="assistant", content=[], status="in_progress"
                )
            )
            await self.event(ResponseOutputItemAddedEvent, output_index=index, item=item)
            if not reasoning:
                part = ResponseOutputText(type="output_text", text="", annotations=[])
                await self.event(
                    ResponseContentPartAddedEvent,
                    item_id=self._id,
                    output_index=index,
                    content_index=0,
                    part=part,
                )
        self._text.append(text)
        if reasoning:
            await self.event(
                ResponseReasoningTextDeltaEvent,
                item_id=self._id,
                output_index=index,
                content_index=0,
                delta=text,
            )
        else:
            await self.event(
                ResponseTextDeltaEvent,
                item_id=self._id,
                output_index=index,
                content_index=0,
                delta=text,
                logprobs=[],
            )

    async def close(self) -> None:
        if self._open is None:
            return
        index, text = len(self.done), "".join(self._text)
        if self._open:
            item: Any = _reasoning(text, self._id)
        else:
            await self.event(
                ResponseTextDoneEvent,
                item_id=self._id,
                output_index=index,
                content_index=0,
                text=text,
                logprobs=[],
            )
            part = ResponseOutputText(type="output_text", text=text, annotations=[])
            await self.event(
                ResponseContentPartDoneEvent, item_id=self._id, output_index=index, content_index=0, part=part
            )
            item = _message(text, self._id)
        await self.event(ResponseOutputItemDoneEvent, output_index=index, item=item)
        self.done.append(item)
        self._open = None

    async def function_call(self, call: ToolCall) -> None:
        index = len(self.done)
        item = _function_call(call)
        added = item.model_copy(update={"arguments": "", "status": "in_progress"})
        await self.event(ResponseOutputItemAddedEvent, output_index=index, item=added)
        assert item.id is not None
        await self.event(
            ResponseFunctionCallArgumentsDeltaEvent, item_id=item.id, output_index=index, delta=item.arguments
        )
        await self.event(
            ResponseFunctionCallArgumentsDoneEvent,
            item_id=item.id,
            output_index=index,
            arguments=item.arguments,
            name=call.name,
        )
        await self.event(ResponseOutputItemDoneEvent, output_index=index, item=item)
        self.done.append(item)


def _type_of(kind: Any) -> str:
    return str(kind.model_fields["type"].annotation.__args__[0])


def _message(text: str, item_id: str | None = None) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=item_id or f"msg_{uuid.uuid4().hex}",
        type="message",
        role="assistant",
        status="completed",
        content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
    )


def _reasoning(text: str, item_id: str | None = None) -> ResponseReasoningItem:
    return ResponseReasoningItem(
        id=item_id or f"rs_{uuid.uuid4().hex}",
        type="reasoning",
        summary=[],
        content=[ReasoningText(type="reasoning_text", text=text)],
        status="completed",
    )


def _function_call(call: ToolCall) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        id=f"fc_{call.id}",
        type="function_call",
        call_id=call.id,
        name=call.name,
        arguments=json.dumps(call.arguments, ensure_ascii=False),
        status="completed",
    )


def _usage(usage: Usage) -> ResponseUsage:
    return ResponseUsage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.input_tokens + usage.output_tokens,
        input_tokens_details=InputTokensDetails(cached_tokens=0, cache_write_tokens=0),
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
    )


def _error_event(body: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI error body as the Responses API's `error` stream event."""
    return {"type": "error", **body["error"]}
