"""`FunctionModel`: a model in the test's own process, whose replies a Python function writes.

No server, no HTTP: the loop (or any code that takes a `Model`) is tested on its own. The function gets
each `ModelRequest` and gives the reply as pieces: a string is text, a `ToolCall` a native call, and any
`ModelEvent` (`ReasoningDelta`, `ToolCallDelta`, `UsageReport`, `Finish`, ...) goes out as it is. It may
return one piece, a list of them, or be a generator (sync or async) that yields them one by one; it may
be async, and it may raise (a `ModelError`, say) as a model would::

    def reply(request: ModelRequest) -> list[str | ToolCall]:
        if isinstance(request.messages[-1], ToolMessage):
            return [f"The answer is {request.messages[-1].result.text}."]
        return [ToolCall(name="calculate", arguments={"expression": "15 + 27"})]

    model = FunctionModel(reply)
    result = await Agent(model).run("15 + 27?")
    assert model.requests[1].messages[-1].result.text == "42"

`FunctionModel.replying(first, second, ...)` answers the n-th request with the n-th reply (each one a
piece, a list of pieces, or a function of the request) and fails the test on one request too many.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from anyio.lowlevel import checkpoint

from toolbridge.models import (
    Finish,
    InvalidToolCall,
    Model,
    ModelEvent,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    ToolModeChanged,
    ToolModeSetting,
    UsageReport,
)
from toolbridge.types import ToolCall

__all__ = ["FunctionModel", "FunctionReply", "ReplyFunction", "ReplyPiece"]

ReplyPiece: TypeAlias = str | ToolCall | ModelEvent
"""Text, a native tool call, or a model event as it is."""
ReplyFunction: TypeAlias = Callable[[ModelRequest], Any]
"""Takes the request; returns (or yields, or awaits to) reply pieces. See the module docstring."""

_EVENT_TYPES = (
    TextDelta,
    ReasoningDelta,
    ToolCallDelta,
    InvalidToolCall,
    ToolModeChanged,
    Finish,
    UsageReport,
)


@dataclass
class FunctionReply:
    """How one reply went."""

    request: ModelRequest
    events: list[ModelEvent] = field(default_factory=list)
    """Every event the reader took, in order."""
    completed: bool = False
    """The function gave all it had; False when the reader closed the stream before (or it raised)."""


class FunctionModel(Model):
    """A `Model` whose replies `function` writes, in process. Records each request and reply."""

    def __init__(
        self, function: ReplyFunction, *, name: str = "function-model", tool_mode: ToolModeSetting = "native"
    ) -> None:
        self.function = function
        self.name = name
        self.tool_mode = tool_mode
        self.replies: list[FunctionReply] = []

    @classmethod
    def replying(
        cls, *replies: ReplyPiece | Sequence[ReplyPiece] | ReplyFunction, **options: Any
    ) -> FunctionModel:
        """A model answering request n with `replies[n]`; one request more fails with the request shown."""
        queue = list(replies)

        def next_reply(request: ModelRequest) -> Any:
            if not queue:
                raise AssertionError(
                    f"the model got request {len(model.requests)} but only {len(replies)} replies were "
                    f"scripted; its last message: {request.messages[-1]!r}"
                )
            reply = queue.pop(0)
            return reply(request) if callable(reply) else reply

        model = cls(next_reply, **options)
        return model

    def __repr__(self) -> str:
        return f"FunctionModel(name={self.name!r}, tool_mode={self.tool_mode!r})"

    @property
    def requests(self) -> list[ModelRequest]:
        return [reply.request for reply in self.replies]

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        return self._stream(request)

    @asynccontextmanager
    async def _stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[ModelEvent]]:
        record = FunctionReply(request)
        self.replies.append(record)
        pieces = await _pieces(self.function(request))
        events = _events(pieces, record)
        try:
            yield events
        finally:
            await events.aclose()


async def _pieces(produced: Any) -> AsyncIterator[Any]:
    """Whatever the function produced, as an async iterator of pieces."""
    if inspect.isawaitable(produced):
        produced = await produced
    if isinstance(produced, AsyncIterator):
        return produced
    items: Iterable[Any] = (
        [produced] if produced is None or isinstance(produced, (str, ToolCall, *_EVENT_TYPES)) else produced
    )

    async def each() -> AsyncIterator[Any]:
        for item in items:
            yield item

    return each()


async def _events(pieces: AsyncIterator[Any], record: FunctionReply) -> AsyncGenerator[ModelEvent]:
    calls = 0
    finished = False
    async for piece in pieces:
        if piece is None:
            continue
        event = _event(piece, calls)
        if isinstance(event, ToolCallDelta) and isinstance(piece, ToolCall):
            calls += 1
        finished = finished or isinstance(event, Finish)
        await checkpoint()  # a real stream's pace: let cancellation and other tasks in
        record.events.append(event)
        yield event
    if not finished:
        event = Finish("tool_calls" if calls else "stop")
        record.events.append(event)
        yield event
    record.completed = True


def _event(piece: Any, calls: int) -> ModelEvent:
    if isinstance(piece, str):
        return TextDelta(piece)
    if isinstance(piece, ToolCall):
        arguments = json.dumps(piece.arguments, ensure_ascii=False)
        return ToolCallDelta(index=calls, id=piece.id, name=piece.name, arguments=arguments)
    if isinstance(piece, _EVENT_TYPES):
        return piece
    raise TypeError(
        f"a FunctionModel reply piece must be a str, a ToolCall or a model event, not {type(piece).__name__}"
    )
