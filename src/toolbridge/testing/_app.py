"""The HTTP side: `POST /v1/chat/completions` answered from the script, and `GET /v1/models`."""

from __future__ import annotations

import json
import time
import traceback
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from ._records import RecordedRequest, ReplyRecord, ScriptState
from ._script import Turn
from ._wire import ReplyHeader, SseEvent, completion_body, error_body, stream_events

__all__ = ["ScriptedApp"]

# Problems with the script itself must not be retried by the client: a retry would only
# consume the next turn and hide the real failure.
_NO_RETRY = {"x-should-retry": "false"}


class ScriptedApp:
    """Answers requests from a `ScriptState`; owns the cancel scopes of replies still streaming."""

    def __init__(self, state: ScriptState, model_name: str) -> None:
        self._state = state
        self._model_name = model_name
        self._streaming: set[anyio.CancelScope] = set()
        self.asgi = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat_completions, methods=["POST"]),
                Route("/v1/models", self._list_models, methods=["GET"]),
            ]
        )

    def cancel_streaming_replies(self) -> None:
        """End replies still streaming at shutdown. Must run on the server's loop."""
        for scope in list(self._streaming):
            scope.cancel()

    async def _list_models(self, request: Request) -> Response:
        model = {"id": self._model_name, "object": "model", "created": 0, "owned_by": "toolbridge-testing"}
        return JSONResponse({"object": "list", "data": [model]})

    async def _chat_completions(self, request: Request) -> Response:
        received_at = time.monotonic()
        body = _parse_json_object(await request.body())
        record, turn = self._state.receive(body, received_at)
        if turn is None:
            message = f"scripted model: no turn left for request {record.number}"
            return self._reply_json(record, 500, error_body(message), _NO_RETRY)
        if turn.expect is not None:
            try:
                if turn.expect(record) is False:  # lets a lambda be a check
                    raise AssertionError(f"{turn.expect!r} returned False")
            except Exception as error:
                with self._state.changing():
                    record.expectation_error = error
                message = (
                    f"scripted model: request {record.number} failed the expectation of turn "
                    f"{record.turn_number}: {_one_line(error)}"
                )
                return self._reply_json(record, 500, error_body(message), _NO_RETRY)
        if turn.error_reply is not None:
            reply = turn.error_reply
            return self._reply_json(record, reply.status, reply.body(), reply.headers())
        header = ReplyHeader(
            completion_id=f"chatcmpl-scripted-{record.number}",
            model=str(body.get("model") or self._model_name),
            created=int(time.time()),
        )
        if record.stream:
            events = stream_events(turn, header, include_usage=record.include_usage)
            return _StreamingReply(events, record.reply, len(turn.segments), self._state, self._streaming)
        return await self._reply_whole(record, turn, completion_body(turn, header))

    async def _reply_whole(self, record: RecordedRequest, turn: Turn, body: dict[str, Any]) -> Response:
        # A non-streaming reply takes as long as its stream would have.
        total_delay = sum(segment.delay * len(segment.pieces) for segment in turn.segments)
        if total_delay:
            await anyio.sleep(total_delay)
        return self._reply_json(record, 200, body, {})

    def _reply_json(
        self, record: RecordedRequest, status: int, body: dict[str, Any], headers: dict[str, str]
    ) -> Response:
        now = time.monotonic()
        with self._state.changing():
            record.reply.status = status
            record.reply.started_at = record.reply.ended_at = now
        return JSONResponse(body, status_code=status, headers=headers)


class _StreamingReply(Response):
    """Streams SSE events, watching for the client to hang up so it can stop early and say so."""

    def __init__(
        self,
        events: list[SseEvent],
        reply: ReplyRecord,
        segment_count: int,
        state: ScriptState,
        streaming: set[anyio.CancelScope],
    ) -> None:
        super().__init__(media_type="text/event-stream")
        self._events = events
        self._reply = reply
        self._state = state
        self._streaming = streaming
        with state.changing():
            reply.streamed = True
            reply.chunks_total = len(events)
            reply.segment_ended_at = [None] * segment_count

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"text/event-stream; charset=utf-8"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        with self._state.changing():
            self._reply.started_at = time.monotonic()
        hung_up = False
        sent_everything = False

        async def watch_for_hang_up(stream_scope: anyio.CancelScope) -> None:
            nonlocal hung_up
            # After the request body, the only message left to receive is the disconnect.
            while (await receive())["type"] != "http.disconnect":
                pass
            if not sent_everything:
                hung_up = True
                stream_scope.cancel()

        with anyio.CancelScope() as shutdown_scope:
            self._streaming.add(shutdown_scope)
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(watch_for_hang_up, group.cancel_scope)
                    for event in self._events:
                        if event.delay:
                            await anyio.sleep(event.delay)
                        await send({"type": "http.response.body", "body": event.data, "more_body": True})
                        if hung_up:  # the send went nowhere
                            break
                        self._record_sent(event)
                    else:
                        sent_everything = True
                        await send({"type": "http.response.body", "body": b"", "more_body": False})
                    group.cancel_scope.cancel()
            finally:
                self._streaming.discard(shutdown_scope)
                with self._state.changing():
                    self._reply.client_disconnected = hung_up
                    self._reply.ended_at = time.monotonic()

    def _record_sent(self, event: SseEvent) -> None:
        now = time.monotonic()
        with self._state.changing():
            self._reply.chunks_sent += 1
            self._reply.chunk_sent_at.append(now)
            if event.ends_segment and event.segment is not None:
                self._reply.segment_ended_at[event.segment] = now


def _parse_json_object(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError:
        return {"unparseable_body": raw.decode(errors="replace")}
    return body if isinstance(body, dict) else {"non_object_body": body}


def _one_line(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(error)).strip().replace("\n", " ")
