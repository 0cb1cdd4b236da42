"""A streamed answer as server-sent events, for every API surface (chat completions, messages,
responses): written by one coroutine, so a run's task group never spans a `yield`, and cancelled as soon
as the client hangs up. The status line waits for the first event, so a model that fails at once is
answered with a plain error response and its status (429, 401, ...)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
from fastapi.responses import Response
from starlette.types import Receive, Scope, Send

from toolbridge.server._errors import ApiError, describe_failure
from toolbridge.server._event_batches import EventBatches
from toolbridge.telemetry import active_event_stream

__all__ = ["EventSink", "EventStreamResponse"]

logger = logging.getLogger(__name__)


class EventSink(Protocol):
    """Hands one event over: its data, and its name for APIs that name events (`event:` lines)."""

    async def __call__(self, data: dict[str, Any], *, event: str | None = None) -> None: ...


class EventStreamResponse(Response):
    """`produce(sink)` writes the events. An `ApiError` it raises before any event went out becomes
    `refusal(error)`, a plain response with its status; any other exception (or one after the first
    event) goes in the stream as `failure(message)`'s event. `done`: end with OpenAI's `data: [DONE]`."""

    def __init__(
        self,
        produce: Callable[[EventSink], Awaitable[None]],
        *,
        refusal: Callable[[ApiError], Response],
        failure: Callable[[str], tuple[dict[str, Any], str | None]],
        done: bool,
    ) -> None:
        super().__init__(media_type="text/event-stream")
        # No Content-Length: the body is as long as the run.
        self.raw_headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache"),
            (b"x-accel-buffering", b"no"),
        ]
        self._produce = produce
        self._refusal = refusal
        self._failure = failure
        self._done = done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        with active_event_stream():
            await self._respond(scope, receive, send)

    async def _respond(self, scope: Scope, receive: Receive, send: Send) -> None:
        events = EventBatches(send, self.raw_headers)

        async def cancel_on_hang_up(scope: anyio.CancelScope) -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            scope.cancel()

        async with anyio.create_task_group() as group:
            group.start_soon(cancel_on_hang_up, group.cancel_scope)
            group.start_soon(events.run)
            try:
                await self._produce(events.add)
            except ApiError as error:  # raised only while no event has gone out
                await self._refusal(error)(scope, receive, send)
                group.cancel_scope.cancel()
                return
            except Exception as error:  # headers are out: the error can only go in the stream
                logger.exception("a streamed answer failed")
                data, name = self._failure(f"the run failed: {describe_failure(error)}")
                await events.add(data, event=name)
            await events.close(done=self._done)
            group.cancel_scope.cancel()
