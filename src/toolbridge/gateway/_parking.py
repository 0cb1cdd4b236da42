"""Calls kept running between a client's rounds on the 2026-07-28 revision.

There a server cannot send its client a request in the middle of a call: it answers the call with
`input_required`, and the client calls again with the answers. When an upstream server asks the gateway
something during a call (sampling, a form, its roots), the gateway therefore keeps the upstream call
running in its own task group, answers the client's call with the question, and passes the answer on
when the client calls again with the `requestState` it was given.
"""

from __future__ import annotations

import logging
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import mcp_types as mcp
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from toolbridge.types import ToolCall

__all__ = ["ANSWER_WAIT", "ParkedCall", "ParkingLot", "Reply"]

ANSWER_WAIT = 600.0
"""Seconds a question waits for the client to call again with its answer before it is given up."""

_KEPT_CALLS = 256
"""Calls waiting for their client's next round; past this the oldest is given up."""

InputAnswer = mcp.InputResponse | mcp.ErrorData

logger = logging.getLogger(__name__)


Reply = mcp.CallToolResult | mcp.InputRequiredResult
"""How a call ends for its client: its result, or a question of the gateway's own (approval)."""


@dataclass(frozen=True)
class _Ended:
    reply: Reply | MCPError
    """An `MCPError`: the upstream server's error, which the client gets as it is."""


@dataclass(eq=False)
class _Question:
    request: mcp.InputRequest
    answered: anyio.Event = field(default_factory=anyio.Event)
    answer: InputAnswer | None = None


@dataclass(eq=False)
class ParkedCall:
    """One upstream call that may have to wait for its client's answers."""

    call: ToolCall
    ctx: Any
    """The client's request now waiting on the call (a new one each round): progress goes to it."""
    _events: MemoryObjectSendStream[_Question | _Ended]
    _received: MemoryObjectReceiveStream[_Question | _Ended]
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    _open: dict[str, _Question] = field(default_factory=dict)

    async def ask(self, request: mcp.InputRequest) -> InputAnswer:
        """From the upstream side: put a question to the client, and wait for its answer."""
        question = _Question(request)
        await self._events.send(question)
        with anyio.move_on_after(ANSWER_WAIT):
            await question.answered.wait()
        if question.answer is None:
            return mcp.ErrorData(
                code=INTERNAL_ERROR,
                message=f"The MCP client did not answer within {ANSWER_WAIT:g} s (toolbridge gateway).",
            )
        return question.answer

    def answer(self, responses: mcp.InputResponses | None) -> None:
        """The client called again: hand each open question its answer (an unanswered one is refused)."""
        for key, question in self._open.items():
            response = (responses or {}).get(key)
            question.answer = response or mcp.ErrorData(
                code=INVALID_PARAMS, message="The MCP client called again without answering this request."
            )
            question.answered.set()
        self._open.clear()

    async def next_step(self) -> Reply | MCPError | mcp.InputRequests:
        """The call's reply, or the questions it waits on (all those asked so far)."""
        event = await self._received.receive()
        if isinstance(event, _Ended):
            return event.reply
        questions = [event]
        while True:  # the others asked meanwhile go in the same round
            try:
                more = self._received.receive_nowait()
            except anyio.WouldBlock:
                break
            if isinstance(more, _Ended):  # cannot happen while a question waits; kept for safety
                await self._events.send(more)
                break
            questions.append(more)
        for question in questions:
            self._open[secrets.token_hex(4)] = question
        return {key: question.request for key, question in self._open.items()}


class ParkingLot:
    """The parked calls of one gateway, and the task group they run in (open while it serves)."""

    def __init__(self) -> None:
        self._groups: list[anyio.abc.TaskGroup] = []
        self._parked: OrderedDict[str, ParkedCall] = OrderedDict()

    @asynccontextmanager
    async def open(self) -> AsyncIterator[None]:
        async with anyio.create_task_group() as group:
            self._groups.append(group)
            try:
                yield
            finally:
                self._groups.remove(group)
                group.cancel_scope.cancel()

    @property
    def is_open(self) -> bool:
        return bool(self._groups)

    def start(self, call: ToolCall, ctx: Any, run: Callable[[ParkedCall], Awaitable[Reply]]) -> ParkedCall:
        """Start `run` in the background; its reply and questions come from the call's `next_step()`."""
        send, receive = anyio.create_memory_object_stream[_Question | _Ended](16)
        parked = ParkedCall(call, ctx, send, receive)

        async def running() -> None:
            with parked.scope:
                reply: Reply | MCPError
                try:
                    reply = await run(parked)
                except MCPError as refused:
                    reply = refused
                except Exception as exc:  # a bug must fail this call, not the task group of every call
                    logger.exception("gateway call %r failed", call.name)
                    text = mcp.TextContent(type="text", text=f"toolbridge failed to run the call: {exc}")
                    reply = mcp.CallToolResult(content=[text], is_error=True)
                await send.send(_Ended(reply))

        self._groups[-1].start_soon(running)
        return parked

    def spawn(self, function: Callable[..., Coroutine[Any, Any, object]], *args: object) -> None:
        """Run `function(*args)` in the background while the gateway serves (dropped when it does not)."""
        if self._groups:
            self._groups[-1].start_soon(function, *args)

    def keep(self, parked: ParkedCall) -> str:
        """Keep `parked` until the client calls again; returns its `requestState`."""
        state = secrets.token_urlsafe(16)
        self._parked[state] = parked
        while len(self._parked) > _KEPT_CALLS:  # clients that never came back: stop the oldest
            _, abandoned = self._parked.popitem(last=False)
            abandoned.scope.cancel()
        return state

    def take(self, state: str | None) -> ParkedCall | None:
        return self._parked.pop(state, None) if state else None
