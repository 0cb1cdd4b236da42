"""Which tool call a server's request (sampling, elicitation, roots) was made during.

MCP's 2025 revisions put no link on the wire from a server's request to the `tools/call` it serves;
the SDK's client callbacks get only the server's own request id. What can be known:

- over streamable HTTP, the request arrives on the response stream of the call's POST, and the SDK
  runs the callback in the context of the task that sent the call (its `contextvars`); on the
  2026-07-28 revision the client answers a call's input requests from within the call itself;
- otherwise (stdio, SSE), a request made while exactly one call is in flight on the session is that
  call's; with several in flight nobody can tell which one asked.

`CallsInFlight` keeps a session's calls and answers which one is asking; `asking_call()` gives it to
the `ClientFeatures` handlers.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["CallInFlight", "CallsInFlight", "asking_call", "making_call"]


@dataclass(frozen=True, eq=False)
class CallInFlight:
    """One `tools/call` waiting for its result."""

    server: str
    call_id: str
    """The agent's id for the call (`ToolCall.id`)."""
    context: contextvars.Context = field(repr=False)
    """Where the call was made: the layers above read their own context variables in it (which chat
    made it, for example)."""


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

    def making(self, call_id: str) -> _Making:
        """Around sending one call and waiting for its result (a context manager)."""
        return _Making(self._calls, CallInFlight(self._server, call_id, contextvars.copy_context()))

    def asking(self) -> CallInFlight | None:
        """The call a request arriving now belongs to (see the module doc)."""
        current = _MAKING.get()
        if current is not None and any(call is current for call in self._calls):
            return current
        return self._calls[0] if len(self._calls) == 1 else None

    @contextmanager
    def answering(self) -> Iterator[CallInFlight | None]:
        """Around a handler: `asking_call()` gives it the call that asked."""
        call = self.asking()
        token = _ASKING.set(call)
        try:
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
