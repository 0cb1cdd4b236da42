"""`ScriptedAnthropicServer`: the same scripts, served over Anthropic's Messages API (`POST /v1/messages`).

Turns are written exactly as for `ScriptedModelServer`; each segment becomes one content block: content as a
`text` block, reasoning as a `thinking` block (with a signature), each native call as a `tool_use`
block whose input arrives as `input_json_delta` pieces, a stream error as an `error` event. Error turns
answer with Anthropic's error body. The records, the waiting helpers and the end-of-script check are
`ScriptedModelServer`'s::

    async with ScriptedAnthropicServer([Turn.text("Hello")]) as model:
        client = model.async_anthropic_client()     # or anthropic.AsyncAnthropic(base_url=model.base_url, ...)
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolbridge._extras import require
from toolbridge.errors import UsageError

from ._app import _NO_RETRY, ScriptedApp, _one_line, _parse_json_object, _StreamingReply
from ._model import ScriptedModelServer
from ._records import ScriptState
from ._script import ErrorReply, Segment, Turn
from ._wire import SseEvent

if TYPE_CHECKING:
    import anthropic

__all__ = ["ScriptedAnthropicServer"]

_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
# Our scripts name error types as OpenAI does; Anthropic's differ for server errors.
_ERROR_TYPES = {"server_error": "api_error", "invalid_request_error": "invalid_request_error"}


class ScriptedAnthropicServer(ScriptedModelServer):
    """A fake Claude behind the real Anthropic Messages protocol on 127.0.0.1."""

    def __init__(self, turns: Iterable[Turn] = (), *, model_name: str = "scripted-claude") -> None:
        super().__init__(turns, model_name=model_name)
        self._app = _AnthropicApp(self._state, model_name)
        self._anthropic_clients: list[anthropic.Anthropic] = []
        self._async_anthropic_clients: list[anthropic.AsyncAnthropic] = []

    @property
    def base_url(self) -> str:
        """For `anthropic.Anthropic(base_url=...)`, e.g. `http://127.0.0.1:PORT` (the SDK adds `/v1/...`)."""
        return super().base_url.removesuffix("/v1")

    def anthropic_client(self, **options: Any) -> anthropic.Anthropic:
        """A client for this server, closed with it; no retries unless asked for."""
        require("anthropic", "anthropic", "ScriptedAnthropicServer.anthropic_client()")
        import anthropic

        client = anthropic.Anthropic(**self._anthropic_options(options))
        self._anthropic_clients.append(client)
        return client

    def async_anthropic_client(self, **options: Any) -> anthropic.AsyncAnthropic:
        """An async client, closed when an `async with` of the server ends; otherwise close it yourself."""
        require("anthropic", "anthropic", "ScriptedAnthropicServer.async_anthropic_client()")
        import anthropic

        client = anthropic.AsyncAnthropic(**self._anthropic_options(options))
        self._async_anthropic_clients.append(client)
        return client

    def openai_client(self, **options: Any) -> Any:
        raise UsageError("ScriptedAnthropicServer speaks the Anthropic protocol: use anthropic_client()")

    def async_openai_client(self, **options: Any) -> Any:
        raise UsageError(
            "ScriptedAnthropicServer speaks the Anthropic protocol: use async_anthropic_client()"
        )

    def close(self) -> None:
        super().close()
        for client in self._anthropic_clients:
            client.close()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for client in self._async_anthropic_clients:
            await client.close()
        await super().__aexit__(exc_type, exc, tb)

    def _anthropic_options(self, options: dict[str, Any]) -> dict[str, Any]:
        return {"base_url": self.base_url, "api_key": "test", "max_retries": 0, **options}


class _AnthropicApp(ScriptedApp):
    def __init__(self, state: ScriptState, model_name: str) -> None:
        super().__init__(state, model_name)
        self.asgi = Starlette(routes=[Route("/v1/messages", self._messages, methods=["POST"])])

    async def _messages(self, request: Request) -> Response:
        received_at = time.monotonic()
        body = _parse_json_object(await request.body())
        record, turn = self._state.receive(body, received_at)
        if turn is None:
            message = f"scripted model: no turn left for request {record.number}"
            return self._reply_json(record, 500, _error_body("api_error", message), _NO_RETRY)
        if turn.expect is not None:
            try:
                if turn.expect(record) is False:
                    raise AssertionError(f"{turn.expect!r} returned False")
            except Exception as error:
                with self._state.changing():
                    record.expectation_error = error
                message = (
                    f"scripted model: request {record.number} failed the expectation of turn "
                    f"{record.turn_number}: {_one_line(error)}"
                )
                return self._reply_json(record, 500, _error_body("api_error", message), _NO_RETRY)
        if turn.error_reply is not None:
            reply = turn.error_reply
            return self._reply_json(record, reply.status, _error_reply_body(reply), reply.headers())
        message_id = f"msg_scripted_{record.number}"
        model = str(body.get("model") or self._model_name)
        if record.stream:
            events = _stream_events(turn, message_id, model)
            return _StreamingReply(events, record.reply, len(turn.segments), self._state, self._streaming)
        return await self._reply_whole(record, turn, _message_body(turn, message_id, model))


# -- the wire format --------------------------------------------------------------------------------


def _error_body(error_type: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _error_reply_body(reply: ErrorReply) -> dict[str, Any]:
    if reply.raw_body is not None:
        return dict(reply.raw_body)
    error_type = "overloaded_error" if reply.status == 529 else _ERROR_TYPES.get(reply.type, reply.type)
    return _error_body(error_type, reply.message)


def _stop_reason(turn: Turn) -> str:
    reason = turn.resolved_finish_reason
    return _STOP_REASONS.get(reason, reason)


def _stream_events(turn: Turn, message_id: str, model: str) -> list[SseEvent]:
    usage = turn.resolved_usage
    start: dict[str, Any] = {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": usage.prompt_tokens, "output_tokens": 1},
    }
    events = [_event("message_start", {"message": start}), _event("ping", {})]
    for index, segment in enumerate(turn.segments):
        if segment.kind == "stream_error":
            message = segment.pieces[0] if segment.pieces else "stream error"
            error = _error_body("overloaded_error", message)
            events.append(SseEvent(_sse("error", error), segment.delay, index, ends_segment=True))
            return events  # a broken stream ends without message_delta or message_stop
        events.append(_event("content_block_start", {"index": index, "content_block": _empty_block(segment)}))
        deltas = [_delta(segment, piece) for piece in segment.pieces]
        if segment.kind == "reasoning":
            deltas.append({"type": "signature_delta", "signature": f"sig-{message_id}-{index}"})
        for position, delta in enumerate(deltas, start=1):
            event = _sse("content_block_delta", {"index": index, "delta": delta})
            events.append(SseEvent(event, segment.delay, index, ends_segment=position == len(deltas)))
        events.append(_event("content_block_stop", {"index": index}))
    delta = {"stop_reason": _stop_reason(turn), "stop_sequence": None}
    events.append(
        _event("message_delta", {"delta": delta, "usage": {"output_tokens": usage.completion_tokens}})
    )
    events.append(_event("message_stop", {}))
    return events


def _empty_block(segment: Segment) -> dict[str, Any]:
    if segment.kind == "content":
        return {"type": "text", "text": ""}
    if segment.kind == "reasoning":
        return {"type": "thinking", "thinking": "", "signature": ""}
    assert segment.call is not None
    return {"type": "tool_use", "id": segment.call.id, "name": segment.call.name, "input": {}}


def _delta(segment: Segment, piece: str) -> dict[str, Any]:
    if segment.kind == "content":
        return {"type": "text_delta", "text": piece}
    if segment.kind == "reasoning":
        return {"type": "thinking_delta", "thinking": piece}
    return {"type": "input_json_delta", "partial_json": piece}


def _message_body(turn: Turn, message_id: str, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for segment in turn.segments:
        text = "".join(segment.pieces)
        if segment.kind == "content":
            content.append({"type": "text", "text": text})
        elif segment.kind == "reasoning":
            content.append({"type": "thinking", "thinking": text, "signature": f"sig-{message_id}"})
        elif segment.call is not None:
            call = segment.call
            content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": json.loads(text)})
    usage = turn.resolved_usage
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason(turn),
        "stop_sequence": None,
        "usage": {"input_tokens": usage.prompt_tokens, "output_tokens": usage.completion_tokens},
    }


def _sse(event_type: str, data: dict[str, Any]) -> bytes:
    payload = json.dumps({"type": event_type, **data} if event_type != "error" else data, ensure_ascii=False)
    return f"event: {event_type}\ndata: {payload}\n\n".encode()


def _event(event_type: str, data: dict[str, Any]) -> SseEvent:
    return SseEvent(_sse(event_type, data))
