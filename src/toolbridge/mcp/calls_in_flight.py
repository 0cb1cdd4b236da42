"""Which tool call a server's request (sampling, elicitation, roots) was made during.

MCP's 2025 revisions put no link on the wire from a server's request to the `tools/call` it serves;
the SDK's client callbacks get only the server's own request id. What can be known:

- over streamable HTTP, the request arrives on the response stream of the call's POST, and the SDK
  runs the callback in the context of the task that sent the call (its `contextvars`); on the
  2026-07-28 revision the client answers a call's input requests from within the call itself;
- otherwise (stdio, SSE), a request made while exactly one call is in flight on the session is that
  call's; with several in flight nobody can tell which one asked.

`CallsInFlight` keeps a session's calls and answers which one is asking; `asking_call()` gives it to
the `ClientFeatures` handlers. While a handler answers, the call's deadline is held: the time a person
takes to fill in a form (or the model to answer a sampling request) is not the server's.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import anyio

__all__ = ["CallDeadline", "CallInFlight", "CallsInFlight", "asking_call", "making_call"]


class CallDeadline:
    """A call's deadline (its cancel scope's), which can be moved on and held: while held it cannot
    pass, and when let go it has the time it had left when it was first held."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self._scope = scope
        self._held = 0
        self._left = 0.0

    def move(self, seconds: float) -> None:
        """The call has `seconds` from now (a progress report reset its timeout)."""
        if self._held:
            self._left = seconds
        else:
            self._scope.deadline = anyio.current_time() + seconds

    @contextmanager
    def held(self) -> Iterator[None]:
        if not self._held:
            self._left = self._scope.deadline - anyio.current_time()
            self._scope.deadline = math.inf
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held:
                self._scope.deadline = anyio.current_time() + max(self._left, 0.0)


@dataclass(frozen=True, eq=False)
class CallInFlight:
    """One `tools/call` waiting for its result."""

    server: str
    call_id: str
    """The agent's id for the call (`ToolCall.id`)."""
    context: contextvars.Context = field(repr=False)
    """Where the call was made: the layers above read their own context variables in it (which chat
    made it, for example)."""
    deadline: CallDeadline | None = field(default=None, repr=False)


_MAKING: contextvars.ContextVar[CallInFlight | None] = contextvars.ContextVar(
    "toolbridge_making_call", default=None
)
_ASKING: contextvars.ContextVar[CallInFlight | None] = contextvars.ContextVar(
    "toolbridge_asking_call", default=None
)


def asking_call() -> CallInFlight | None:
    """In a `ClientFeatures` handler: the call during which the server made this request, or None
    when it asked outside any call or during one of several that cannot be told apart."""
    return _ASKING.get()


def making_call() -> CallInFlight | None:
    """Inside a call being made (`CallsInFlight.making`): that call; else None."""
    return _MAKING.get()


class CallsInFlight:
    """The tool calls in flight on one session."""

    def __init__(self, server: str) -> None:
        self._server = server
        self._calls: list[CallInFlight] = []

    def making(self, call_id: str, deadline: CallDeadline | None = None) -> _Making:
        """Around sending one call and waiting for its result (a context manager); its `deadline` is
        held while a handler answers the server during the call."""
        call = CallInFlight(self._server, call_id, contextvars.copy_context(), deadline)
        return _Making(self._calls, call)

    def asking(self) -> CallInFlight | None:
        """The call a request arriving now belongs to (see the module doc)."""
        current = _MAKING.get()
        if current is not None and any(call is current for call in self._calls):
            return current
        return self._calls[0] if len(self._calls) == 1 else None

    @contextmanager
    def answering(self) -> Iterator[CallInFlight | None]:
        """Around a handler: `asking_call()` gives it the call that asked, whose deadline is held until
        the handler has answered."""
        call = self.asking()
        token = _ASKING.set(call)
        try:
            if call is not None and call.deadline is not None:
                with call.deadline.held():
                    yield call
            else:
                yield call
        finally:
            _ASKING.reset(token)


class _Making:
    """One call in flight while inside it (a class, not `@contextmanager`: a call pays a generator's
    microseconds otherwise)."""

    __slots__ = ("_call", "_calls", "_token")

    def __init__(self, calls: list[CallInFlight], call: CallInFlight) -> None:
        self._calls = calls
        self._call = call

    def __enter__(self) -> CallInFlight:
        self._token = _MAKING.set(self._call)
        self._calls.append(self._call)
        return self._call

    def __exit__(self, *exc_info: object) -> None:
        self._calls.remove(self._call)
        _MAKING.reset(self._token)
