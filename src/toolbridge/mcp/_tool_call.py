"""One tool call on a live session, and what its failures become: an error `ToolResult` the model can
read, or a `LostCall` when the transport died under it (the connection then decides whether to resend).

A call's `CallOutcome` carries the neutral result beside the server's own `CallToolResult`, for a caller
that passes it on unchanged (the gateway keeps what the neutral result has no place for)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types
from mcp import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from pydantic import ValidationError

from toolbridge.config.model import ServerConfig
from toolbridge.mcp._convert import tool_result_from_mcp
from toolbridge.mcp._failures import call_timed_out_message
from toolbridge.mcp._invalid_reply import INVALID_REPLY, invalid_reply_message
from toolbridge.mcp._live_session import LiveSession
from toolbridge.mcp._progress_relay import ProgressRelay
from toolbridge.mcp._revision import revision_advice
from toolbridge.mcp.calls_in_flight import CallDeadline
from toolbridge.mcp.progress import ProgressHandler
from toolbridge.mcp.tasks import TaskWatch, follow_task, task_to_resume, watching_tasks
from toolbridge.types import ToolErrorKind, ToolResult

__all__ = [
    "RETRIED_NOTE",
    "SESSION_GONE",
    "CallOutcome",
    "LostCall",
    "ServerCall",
    "call_once",
    "unavailable",
]

RETRIED_NOTE = (
    "The connection to the server was lost during this call; it was restarted and the call resent once."
)
SESSION_GONE = "the server no longer knew the session (HTTP 404): it was restarted or ended the session"

"""The scope of a call whose timeout the SDK keeps (reusable: it holds no state)."""


@dataclass(slots=True)  # not frozen: that costs a microsecond per call, and nothing changes it
class CallOutcome:
    """What came of one tool call: the neutral `result`, and `raw`, what the server answered (None when
    no server answered: a Python tool, a cache hit, a call refused before it was sent)."""

    result: ToolResult
    raw: mcp_types.CallToolResult | None = None


@dataclass(slots=True)  # not frozen: that costs a microsecond per call, and nothing changes it
class ServerCall:
    """A call as sent to this server, with its deadline (not `toolbridge.types.ToolCall`, the model's)."""

    name: str
    arguments: dict[str, Any]
    call_id: str
    timeout: float
    on_progress: ProgressHandler | None


class LostCall:
    """A call that got no answer because the transport died under it (or before it was sent).
    `task`: the server had made a task of it, which a new session can follow instead of resending."""

    def __init__(self, why: str, *, sent: bool = True, task: TaskWatch | None = None) -> None:
        self.why = why
        self.sent = sent
        self.task = task


async def call_once(
    live: LiveSession, config: ServerConfig, call: ServerCall, *, resume: TaskWatch | None = None
) -> CallOutcome | LostCall:
    """Send `call` on `live` once: the server's result, an error result (the server refused it, timed out
    or answered wrongly), or `LostCall`. With `resume`, the call is not sent: its task (made on an
    earlier session) is followed instead."""
    server, name, call_id, timeout = config.name, call.name, call.call_id, call.timeout
    resume = resume or task_to_resume(call_id)  # a run taken over from a replica that died
    client = live.client  # not the bare session: the client answers a server's input requests
    if client is None:
        return LostCall("the session had already ended", sent=False)
    started = time.perf_counter()
    resets = config.timeout_resets_on_progress
    # A deadline we can move (on progress) and hold (while a person answers the server's question):
    # our own scope instead of the SDK's timeout (cancelling it still sends the server a courtesy cancel).
    scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)
    deadline = CallDeadline(scope)
    reports = ProgressRelay(call.on_progress, deadline if resets else None, timeout)
    try:
        with scope, live.calls.making(call_id, deadline), watching_tasks(reports.relay) as watch:
            try:
                if resume is not None and resume.task_id is not None:
                    watch.task_id, watch.poll_ms = resume.task_id, resume.poll_ms
                    raw = await follow_task(client.session, watch, timeout=None)
                else:
                    raw = await client.call_tool(name, call.arguments, progress_callback=reports.relay)
            finally:
                reports.close()
        if scope.cancelled_caught:
            message = call_timed_out_message(server, name, timeout, resets_on_progress=resets)
            elapsed = time.perf_counter() - started
            return CallOutcome(
                ToolResult.error(call_id, message, kind="timeout", server=server, duration=elapsed)
            )
    except MCPError as exc:
        elapsed = time.perf_counter() - started
        if exc.code == CONNECTION_CLOSED:
            return LostCall(exc.error.message, task=watch if watch.task_id is not None else None)
        if live.http.session_gone:
            # Refused, so it did not run: safe to send again on a new session.
            return LostCall(SESSION_GONE, sent=False)
        kind: ToolErrorKind
        if exc.code == REQUEST_TIMEOUT:
            kind, message = "timeout", call_timed_out_message(server, name, timeout)
        elif exc.error.data == INVALID_REPLY:
            answering = f"to the call to {name!r}"
            kind, message = (
                "server_error",
                invalid_reply_message(server, exc.error.message, answering=answering),
            )
        else:
            advice = revision_advice(client.session.protocol_version, exc.error.message)
            kind, message = (
                "server_error",
                f"Server {server!r} rejected the call to {name!r}: {exc.error.message} "
                f"(JSON-RPC error {exc.code})." + (advice or " Check the tool name and arguments."),
            )
        return CallOutcome(ToolResult.error(call_id, message, kind=kind, server=server, duration=elapsed))
    except (RuntimeError, ValidationError) as exc:
        # The SDK checks results against the protocol and the tool's output schema; jsonschema's
        # first line says what is wrong, the rest repeats the schema.
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        message = (
            f"Server {server!r} returned an invalid result for {name!r}: {reason}. The server broke "
            "its own promise; tell the user this tool's result could not be used."
        )
        elapsed = time.perf_counter() - started
        return CallOutcome(
            ToolResult.error(call_id, message, kind="server_error", server=server, duration=elapsed)
        )
    result = tool_result_from_mcp(raw, call_id=call_id, server=server, duration=time.perf_counter() - started)
    return CallOutcome(result, raw)


def unavailable(call: ServerCall, server: str, message: str, *, started: float) -> CallOutcome:
    """The outcome of a call lost with its session and not answered on a new one."""
    duration = time.perf_counter() - started
    return CallOutcome(
        ToolResult.error(call.call_id, message, kind="server_unavailable", server=server, duration=duration)
    )
