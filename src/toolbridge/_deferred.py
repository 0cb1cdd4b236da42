"""`CallDeferred`, below both the call pipeline (`toolbridge.tools`) and the MCP layer, which raise it."""

from __future__ import annotations

__all__ = ["CallDeferred"]


class CallDeferred(Exception):
    """A call answered in a later request, not now: `reply` goes back to the caller, and the call is
    not logged or counted (its later request is). Raised by an approver that asks in rounds (the
    gateway's `input_required` on 2026-07-28), and by a server's `input_required` relayed to the
    client who answers it (`toolbridge.mcp._sdk.InputRequiredRelayed`)."""

    def __init__(self, reply: object, message: str = "the call is answered in a later request") -> None:
        super().__init__(message)
        self.reply = reply
