"""Tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663) between the gateway and its clients.

A client that declares the extension (for its session, or for one call in `_meta`) gets task handles
of the gateway's own, never an upstream server's:
- relayed: when the upstream server answers the call with a task, the client gets a gateway task id
  mapped to that upstream task; its `tasks/get`, `tasks/update` and `tasks/cancel` are relayed there;
- made here: a call still running after `task_after` seconds (an upstream tool that does not make
  tasks; on the 2026-07-28 revision) becomes a task of the gateway's, run in the gateway's task group. Its status, its result, and
  the questions its server asks (`inputRequests`, answered with `tasks/update`) come from the gateway.
A task id belongs to the client (its HTTP token) it was given to: any other id is unknown (-32602).
Each client has at most `max_tasks` unfinished tasks (past that its calls run to their end, as for a
client without the extension); a task is kept `keep_seconds` after it was last looked at.
A client that does not declare the extension gets the call's result, as before: the gateway's own
client follows an upstream task (`toolbridge.mcp.tasks`).
"""

from __future__ import annotations

import contextvars
import datetime
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import mcp_types as mcp
from mcp import ClientSession, MCPError
from mcp.client.extension import ClaimContext
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding, compose_tool_call_handler
from mcp.server.lowlevel import Server
from mcp.server.mcpserver.server import require_client_extension
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict

from toolbridge.config.gateway import DEFAULT_GATEWAY_MAX_RESULT_CHARS
from toolbridge.gateway._convert import call_result_to_mcp, sent_size
from toolbridge.gateway._parking import ParkingLot
from toolbridge.mcp._convert import tool_result_from_mcp
from toolbridge.mcp.tasks import (
    CANCEL_WAIT,
    TASKS_EXTENSION,
    TaskCreated,
    _CancelTask,
    _GetTask,
    _TaskAnswers,
    _TaskRef,
    _UpdateTask,
    handing_over_tasks,
)

__all__ = ["GatewayTasks", "note_progress"]

logger = logging.getLogger(__name__)

TASK_AFTER = 5.0
"""Seconds a call of a client that takes tasks may run before the gateway makes a task of it."""
MAX_TASKS = 16
"""Unfinished tasks one client (one HTTP token) may have."""
KEEP_SECONDS = 600.0
"""Seconds a task is kept after it was last looked at (its `ttlMs`)."""
POLL_MS = 500
_TERMINAL = frozenset({"completed", "failed", "cancelled"})
_ACK: dict[str, Any] = {"resultType": "complete"}

ResultT = TypeVar("ResultT", bound=mcp.Result)
Handler = Callable[[ServerRequestContext[Any, Any], mcp.CallToolRequestParams], Awaitable[Any]]


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")


class _Relayed(mcp.Result):
    """An upstream `tasks/get` answer, every field kept to pass on."""

    model_config = ConfigDict(extra="allow")


@dataclass(eq=False)
class _Upstream:
    session: ClientSession
    task_id: str


@dataclass(eq=False)
class _Task:
    task_id: str
    owner: str | None
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    touched: float = field(default_factory=time.monotonic)
    status: str = "working"
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    pending: dict[str, Any] = field(default_factory=dict)
    """The questions the client has yet to answer (`inputRequests`)."""
    answers: dict[str, Any] = field(default_factory=dict)
    answered: anyio.Event = field(default_factory=anyio.Event)
    upstream: _Upstream | None = None
    created: TaskCreated | None = None
    is_task: bool = False
    """Handed to the client as a task (until then the call may still answer in its own request)."""
    settled: anyio.Event = field(default_factory=anyio.Event)
    first: Any = None
    """Before it is a task: the call's reply, or the `MCPError` it failed with."""
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)

    def update(self, status: str) -> None:
        self.status, self.updated_at = status, _now()

    def envelope(self, keep_seconds: float) -> dict[str, Any]:
        body = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttlMs": max(1, int(keep_seconds * 1000)),
            "pollIntervalMs": POLL_MS,
        }
        if self.status_message is not None:
            body["statusMessage"] = self.status_message
        return body


_RUNNING: contextvars.ContextVar[_Task | None] = contextvars.ContextVar(
    "toolbridge_gateway_task", default=None
)
"""The gateway task the current call runs in (set in `_drive`, inherited by the parked call's run)."""


def note_progress(message: str | None) -> None:
    """Told each progress report of a gateway call: the last message is its task's `statusMessage`."""
    task = _RUNNING.get()
    if task is not None and message:
        task.status_message, task.updated_at = message, _now()


class GatewayTasks(Extension):
    """The gateway's side of the tasks extension (`install` it on the gateway's server)."""

    identifier = TASKS_EXTENSION

    def __init__(self, lot: ParkingLot, *, max_result_chars: int = DEFAULT_GATEWAY_MAX_RESULT_CHARS) -> None:
        """`lot`: the gateway's task group (its parking lot); `max_result_chars`: the cap on each result,
        a relayed task's too."""
        self._lot = lot
        self._max_result_chars = max_result_chars
        self._tasks: dict[str, _Task] = {}
        self._handler: Handler | None = None
        self.task_after = TASK_AFTER
        self.max_tasks = MAX_TASKS
        self.keep_seconds = KEEP_SECONDS

    def install(self, server: Server[Any], call_tool: Handler) -> None:
        """Serve `tasks/*` on `server`, declare the extension, and wrap its `tools/call` (`call_tool`)."""
        self._handler = call_tool
        for method in self.methods():
            server.add_request_handler(method.method, method.params_type, method.handler)
        server.extensions[self.identifier] = self.settings()
        server.add_request_handler(
            "tools/call", mcp.CallToolRequestParams, compose_tool_call_handler([self], call_tool)
        )

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", _TaskRef, self._get),
            MethodBinding("tasks/update", _TaskAnswers, self._update),
            MethodBinding("tasks/cancel", _TaskRef, self._cancel),
        ]

    async def intercept_tool_call(
        self, params: mcp.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        owner = _owner()
        if not _declared(ctx, params) or not self._lot.is_open or self._unfinished(owner) >= self.max_tasks:
            return await call_next(ctx)
        task = _Task(secrets.token_urlsafe(16), owner)
        self._lot.spawn(self._drive, task, ctx, params)
        # A task of the gateway's outlives its request: its server's questions must reach the client in
        # rounds (`inputRequests`), which only the 2026-07-28 revision has; on older ones, where they
        # go by the request's back-channel, only a server's own task is handed on.
        modern = ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS
        try:
            with anyio.move_on_after(self.task_after if modern else math.inf):
                await task.settled.wait()
        except anyio.get_cancelled_exc_class():
            task.scope.cancel()  # the client gave up on its call: the call with it
            raise
        if task.upstream is None and task.settled.is_set():  # ended in time: answered as a plain call
            if isinstance(task.first, MCPError):
                raise task.first
            return task.first  # type: ignore[no-any-return]
        task.is_task = True
        self._tasks[task.task_id] = task
        body = task.envelope(self.keep_seconds)
        if task.created is not None:  # the upstream server's task: say what it said of it
            said = task.created.model_dump(mode="json", by_alias=True, exclude_none=True)
            body.update(
                {key: said[key] for key in ("status", "statusMessage", "pollIntervalMs") if key in said}
            )
        return {**body, "resultType": "task"}

    async def _drive(
        self, task: _Task, ctx: ServerRequestContext[Any, Any], params: mcp.CallToolRequestParams
    ) -> None:
        """Run the call (round after round of the client's answers once it is a task) to its end."""
        assert self._handler is not None

        async def hand_over(created: TaskCreated, claim: ClaimContext) -> mcp.CallToolResult:
            task.upstream, task.created = _Upstream(claim.session, created.task_id), created
            task.update(created.status)
            task.settled.set()
            text = f"The server made task {created.task_id!r} of this call; the gateway's client follows it."
            return mcp.CallToolResult(content=[mcp.TextContent(text=text)], is_error=True)

        _RUNNING.set(task)  # this task's own context
        with task.scope, handing_over_tasks(hand_over):
            try:
                while True:
                    reply = await self._handler(ctx, params)
                    if task.upstream is not None:
                        return
                    if not task.is_task:
                        task.first = reply
                        task.settled.set()
                        return
                    if isinstance(reply, mcp.InputRequiredResult):
                        params = await self._ask(task, params, reply)
                        continue
                    task.result = _dumped(reply)
                    task.update("completed")
                    return
            except MCPError as exc:
                if not task.is_task:
                    task.first = exc
                    task.settled.set()
                    return
                task.error = exc.error.model_dump(mode="json", by_alias=True, exclude_none=True)
                task.update("failed")
            except Exception as exc:  # a bug must fail this task, not the task group of every call
                logger.exception("gateway task of %r failed", params.name)
                failure = MCPError(mcp.INTERNAL_ERROR, f"toolbridge failed to run the call: {exc}")
                task.error = failure.error.model_dump(mode="json", exclude_none=True)
                task.update("failed")
                if not task.is_task:
                    task.first = failure
                    task.settled.set()
        if task.scope.cancelled_caught and task.status not in _TERMINAL:
            task.update("cancelled")

    async def _ask(
        self, task: _Task, params: mcp.CallToolRequestParams, asked: mcp.InputRequiredResult
    ) -> mcp.CallToolRequestParams:
        """Put the call's questions to the client (`inputRequests`), and wait until it answered them all:
        the next round's params."""
        task.pending = {
            key: request.model_dump(mode="json", by_alias=True, exclude_none=True)
            for key, request in (asked.input_requests or {}).items()
        }
        task.answers, task.answered = {}, anyio.Event()
        task.update("input_required")
        await task.answered.wait()
        task.update("working")
        raw = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        raw.update(inputResponses=task.answers, requestState=asked.request_state)
        return mcp.CallToolRequestParams.model_validate(raw)

    def _unfinished(self, owner: str | None) -> int:
        self._forget_old()
        return sum(1 for task in self._tasks.values() if task.owner == owner and task.status not in _TERMINAL)

    def _forget_old(self) -> None:
        limit = time.monotonic() - self.keep_seconds
        for task_id in [key for key, task in self._tasks.items() if task.touched < limit]:
            task = self._tasks.pop(task_id)
            task.scope.cancel()
            if task.upstream is not None and task.status not in _TERMINAL:  # nobody will ask for it now
                self._lot.spawn(_cancel_upstream, task.upstream)

    def _capped(self, result: dict[str, Any]) -> dict[str, Any]:
        """A relayed task's result within `max_result_chars`, as the gateway's calls' results are (cut
        with a note; an error result when it had structured content, which a cut result cannot keep)."""
        raw = mcp.CallToolResult.model_validate(result)
        neutral = tool_result_from_mcp(raw, call_id="task", server="", duration=0.0)
        capped, cut = neutral.truncated(
            self._max_result_chars, size=sent_size(neutral, self._max_result_chars)
        )
        if not cut:
            return result
        if raw.structured_content is not None:
            capped = capped.model_copy(update={"is_error": True})
        return _dumped(call_result_to_mcp(capped))

    def _task(self, ctx: ServerRequestContext[Any, Any], params: _TaskRef | _TaskAnswers) -> _Task:
        """The client's task of `params.taskId`; refused when the client did not declare the extension,
        or the id is not one the gateway gave this client."""
        if not _declared(ctx, params):
            require_client_extension(ctx, TASKS_EXTENSION)
        if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
            headers = getattr(ctx.request, "headers", None)  # the HTTP request (None over stdio)
            if headers is not None and decode_header_value(headers.get(MCP_NAME_HEADER)) != params.task_id:
                raise MCPError(mcp.HEADER_MISMATCH, f"Mcp-Name must be the taskId {params.task_id!r}")
        self._forget_old()
        task = self._tasks.get(params.task_id)
        if task is None or task.owner != _owner():
            raise MCPError(
                mcp.INVALID_PARAMS,
                f"No task {params.task_id!r} here: the toolbridge gateway did not give it to this client, "
                "or it ended and was forgotten. Call the tool again.",
            )
        task.touched = time.monotonic()
        return task

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: _TaskRef) -> HandlerResult:
        task = self._task(ctx, params)
        if task.upstream is not None:
            relayed = await _relay(task, _GetTask(params=_TaskRef(task_id=task.upstream.task_id)), _Relayed)
            body = relayed.model_dump(mode="json", by_alias=True, exclude_none=True)
            task.status = str(body.get("status", task.status))
            if isinstance(body.get("result"), dict):
                body["result"] = self._capped(body["result"])
            return {**body, "taskId": task.task_id, "resultType": "complete"}
        body = task.envelope(self.keep_seconds)
        if task.status == "input_required":
            body["inputRequests"] = dict(task.pending)
        if task.result is not None:
            body["result"] = task.result
        if task.error is not None:
            body["error"] = task.error
        return {**body, "resultType": "complete"}

    async def _update(self, ctx: ServerRequestContext[Any, Any], params: _TaskAnswers) -> HandlerResult:
        task = self._task(ctx, params)
        if task.upstream is not None:
            answers = _TaskAnswers(task_id=task.upstream.task_id, input_responses=params.input_responses)
            await _relay(task, _UpdateTask(params=answers), mcp.EmptyResult)
            return _ACK
        for key, response in params.input_responses.items():  # keys not asked for are ignored
            if task.pending.pop(key, None) is not None:
                task.answers[key] = response
        if task.status == "input_required" and not task.pending:
            task.answered.set()
        return _ACK

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: _TaskRef) -> HandlerResult:
        task = self._task(ctx, params)
        if task.upstream is not None:
            await _relay(task, _CancelTask(params=_TaskRef(task_id=task.upstream.task_id)), mcp.EmptyResult)
            if task.status not in _TERMINAL:  # no longer counted against the client's limit
                task.update("cancelled")  # (until tasks/get says what the server made of it)
            return _ACK
        if task.status not in _TERMINAL:
            task.scope.cancel()
            task.update("cancelled")
        return _ACK


async def _relay(task: _Task, request: Any, answer: type[ResultT]) -> ResultT:
    """Send `request` to the server's task behind `task`; its errors name the gateway's task id."""
    assert task.upstream is not None
    try:
        return await task.upstream.session.send_request(request, answer)
    except MCPError as exc:
        message = exc.error.message.replace(task.upstream.task_id, task.task_id)
        raise MCPError(exc.code, f"The server's task behind {task.task_id!r}: {message}") from None


async def _cancel_upstream(upstream: _Upstream) -> None:
    with anyio.move_on_after(CANCEL_WAIT), suppress(MCPError):
        await upstream.session.send_request(
            _CancelTask(params=_TaskRef(task_id=upstream.task_id)), mcp.EmptyResult
        )


def _declared(ctx: ServerRequestContext[Any, Any], params: Any) -> bool:
    """Whether the client takes tasks: declared for its session, or for this request (`_meta`)."""
    capabilities = ctx.session.client_capabilities
    if capabilities is not None and TASKS_EXTENSION in (capabilities.extensions or {}):
        return True
    meta = getattr(params, "meta", None) or {}
    per_request = meta.get(mcp.CLIENT_CAPABILITIES_META_KEY) or {}
    return isinstance(per_request, dict) and TASKS_EXTENSION in (per_request.get("extensions") or {})


def _owner() -> str | None:
    """Whose tasks: the HTTP token the request came with (None: stdio, or a gateway without tokens)."""
    token = get_access_token()
    return token.client_id if token is not None else None


def _dumped(reply: Any) -> dict[str, Any]:
    if isinstance(reply, mcp.Result):
        return reply.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(reply or {})
