"""The recent SSE events of the gateway's streamable HTTP sessions, so that a client whose stream broke
resumes it with `Last-Event-ID` (SEP-1699). With an event store the SDK also opens each stream with a
priming event (an id, no data) and tells clients how long to wait before reconnecting (`retry`).

Only the latest `MAX_EVENTS` are kept: a client that comes back later than that starts over, and a
long-running gateway's memory stays bounded.
"""

from __future__ import annotations

from collections import OrderedDict

import mcp_types as mcp
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

__all__ = ["MAX_EVENTS", "RETRY_MS", "RecentEvents"]

MAX_EVENTS = 2000
RETRY_MS = 1000
"""Milliseconds a client waits before reconnecting a stream the gateway closed."""


class RecentEvents(EventStore):
    def __init__(self, max_events: int = MAX_EVENTS) -> None:
        self._max_events = max_events
        self._events: OrderedDict[int, tuple[str, mcp.JSONRPCMessage | None]] = OrderedDict()
        self._next = 0

    async def store_event(self, stream_id: str, message: mcp.JSONRPCMessage | None) -> str:
        self._next += 1
        self._events[self._next] = (stream_id, message)
        while len(self._events) > self._max_events:
            self._events.popitem(last=False)
        return str(self._next)

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        """Send the events of `last_event_id`'s stream after it; None when it is unknown (or forgotten)."""
        after = int(last_event_id) if last_event_id.isdigit() else None
        if after is None or after not in self._events:
            return None
        stream = self._events[after][0]
        for number, (stream_id, message) in list(self._events.items()):
            if number > after and stream_id == stream and message is not None:  # None: a priming event
                await send_callback(EventMessage(message, str(number)))
        return stream
