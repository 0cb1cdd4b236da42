"""A server that runs long tool calls as tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663),
for tests of toolbridge's client side: a task's status messages, its cancellation, an input request
inside it.

The SDK has no server side for the extension; `TasksExtension` below is ours, built on the SDK's
extension plumbing (`Extension.methods` for `tasks/get|update|cancel`, `intercept_tool_call` to turn a
call into a task). A client that did not declare the extension gets the tools run synchronously.

Tools:
- `slow_compute(seconds, label)`: reports a status message per step, then `computed <label>`.
- `hold(tag)`: runs until cancelled; `was_cancelled(tag)` (not a task) says whether it
  was (or a `confirm_delete` of that file name).
- `confirm_delete(filename)`: asks the client (an elicitation inside the task), then says what it did.
- `greet(name)`: never a task; `times_run(label)` neither: how often `slow_compute(label=...)` started.
- `wait_for_release(tag)`: a task that ends (`released <tag>`) once `release(tag)` (not a task) is
  called, whichever client calls it: a test decides when a task finishes (after killing its client);
  `was_cancelled(tag)` says whether it was cancelled instead; `was_followed(tag)` (not a task) whether
  a client polled it (`tasks/get`), waiting for that.

Run: python tests/servers/tasks_server.py [--transport stdio|http] [--port N]
"""

from __future__ import annotations

import asyncio
import contextvars
import datetime
import uuid
from dataclasses import dataclass, field
from typing import Any

import _fast_start  # noqa: F401  (a warm parent starts this server in the test run: see the module)
import anyio
import mcp_types as mcp
from _cli import run
from mcp import MCPError
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

TASKS = "io.modelcontextprotocol/tasks"
MISSING_CAPABILITY = mcp.MISSING_REQUIRED_CLIENT_CAPABILITY
TASK_TOOLS = {
    "slow_compute",
    "hold",
    "confirm_delete",
    "multi_input",
    "failing_job",
    "protocol_error_job",
    "wait_for_release",
}
POLL_INTERVAL_MS = 50
TTL_MS = 600_000


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")


@dataclass(eq=False)
class Job:
    """One task: what `tasks/get` reports, and how its tool asks for input."""

    task_id: str
    status: str = "working"
    status_message: str | None = None
    created_at: str = field(default_factory=_now)
    last_updated_at: str = field(default_factory=_now)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    answers: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    runner: asyncio.Task[None] | None = None

    def touch(self, status: str | None = None) -> None:
        if status is not None:
            self.status = status
        self.last_updated_at = _now()

    def report(self, message: str) -> None:
        self.status_message = message
        self.touch()

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        key = uuid.uuid4().hex[:8]
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[key], self.answers[key] = request, answer
        self.touch("input_required")
        try:
            return await answer
        finally:
            self.pending.pop(key, None)
            self.answers.pop(key, None)
            if not self.pending and self.status == "input_required":
                self.touch("working")

    def envelope(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        if self.status_message is not None:
            body["statusMessage"] = self.status_message
        return body


JOBS: dict[str, Job] = {}
CURRENT_JOB: contextvars.ContextVar[Job | None] = contextvars.ContextVar("current_job", default=None)
cancelled: dict[str, anyio.Event] = {}
released: dict[str, anyio.Event] = {}
followed: dict[str, anyio.Event] = {}
runs: dict[str, int] = {}
job_tags: dict[str, str] = {}
"""The tag of each `wait_for_release` task, by task id."""


class TaskRef(mcp.RequestParams):
    task_id: str


class TaskAnswers(mcp.RequestParams):
    task_id: str
    input_responses: dict[str, Any]


def _negotiated(ctx: ServerRequestContext[Any, Any], params: Any) -> bool:
    capabilities = ctx.session.client_capabilities
    if capabilities is not None and TASKS in (capabilities.extensions or {}):
        return True
    meta = getattr(params, "meta", None) or {}
    per_request = meta.get(mcp.CLIENT_CAPABILITIES_META_KEY) or {}
    return TASKS in (per_request.get("extensions") or {})


def _job(ctx: ServerRequestContext[Any, Any], params: TaskRef | TaskAnswers) -> Job:
    if not _negotiated(ctx, params):
        required = {"requiredCapabilities": {"extensions": {TASKS: {}}}}
        raise MCPError(MISSING_CAPABILITY, f"{ctx.method} needs the {TASKS} extension declared", required)
    headers = getattr(ctx.request, "headers", None)  # the HTTP request (None over stdio)
    if headers is not None and headers.get("mcp-name") != params.task_id:
        raise MCPError(mcp.HEADER_MISMATCH, f"Mcp-Name must be the taskId {params.task_id!r}")
    job = JOBS.get(params.task_id)
    if job is None:
        raise MCPError(mcp.INVALID_PARAMS, f"no task {params.task_id!r}")
    return job


async def _get(ctx: ServerRequestContext[Any, Any], params: TaskRef) -> HandlerResult:
    job = _job(ctx, params)
    if job.task_id in job_tags:
        followed.setdefault(job_tags[job.task_id], anyio.Event()).set()
    body = {"resultType": "complete", **job.envelope()}
    if job.status == "input_required":
        body["inputRequests"] = dict(job.pending)
    if job.result is not None:
        body["result"] = job.result
    if job.error is not None:
        body["error"] = job.error
    return body


async def _update(ctx: ServerRequestContext[Any, Any], params: TaskAnswers) -> HandlerResult:
    job = _job(ctx, params)
    for key, response in params.input_responses.items():
        answer = job.answers.get(key)
        if answer is not None and not answer.done():
            answer.set_result(response)
    return {"resultType": "complete"}


async def _cancel(ctx: ServerRequestContext[Any, Any], params: TaskRef) -> HandlerResult:
    job = _job(ctx, params)
    if job.runner is not None and not job.runner.done():
        job.runner.cancel()
    return {"resultType": "complete"}


class TasksExtension(Extension):
    identifier = TASKS

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", TaskRef, _get),
            MethodBinding("tasks/update", TaskAnswers, _update),
            MethodBinding("tasks/cancel", TaskRef, _cancel),
        ]

    async def intercept_tool_call(
        self, params: mcp.CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if params.name not in TASK_TOOLS or not _negotiated(ctx, params):
            return await call_next(ctx)
        job = Job(uuid.uuid4().hex)
        JOBS[job.task_id] = job

        async def body() -> None:
            CURRENT_JOB.set(job)
            try:
                outcome = await call_next(ctx)
            except asyncio.CancelledError:
                job.touch("cancelled")
                raise
            except MCPError as exc:
                job.error = exc.error.model_dump(mode="json", exclude_none=True)
                job.touch("failed")
                return
            dumped = (
                outcome.model_dump(mode="json", by_alias=True, exclude_none=True)
                if isinstance(outcome, BaseModel)
                else dict(outcome or {})
            )
            job.result = dumped
            job.touch("completed")

        job.runner = asyncio.get_running_loop().create_task(body())
        return {"resultType": "task", **job.envelope()}


server = MCPServer("tasks", log_level="WARNING", extensions=[TasksExtension()])


@server.tool()
async def greet(name: str) -> str:
    """Say hello (never a task)."""
    return f"Hello, {name}!"


@server.tool()
async def slow_compute(seconds: float = 0.0, label: str = "job", steps: int = 3) -> str:
    """Work for `seconds`, in `steps` steps, reporting each (a task for clients that support them)."""
    runs[label] = runs.get(label, 0) + 1
    job = CURRENT_JOB.get()
    for step in range(1, steps + 1):
        if job is not None:
            job.report(f"step {step} of {steps} for {label}")
        await anyio.sleep(seconds / steps)
    return f"computed {label}"


@server.tool()
async def hold(tag: str) -> str:
    """Run until cancelled (a minute at most)."""
    job = CURRENT_JOB.get()
    if job is not None:
        job.report(f"holding {tag}")
    try:
        await anyio.sleep(60)
    except anyio.get_cancelled_exc_class():
        cancelled.setdefault(tag, anyio.Event()).set()
        raise
    return "never cancelled"


@server.tool()
async def was_cancelled(tag: str, wait_ms: int = 10_000) -> bool:
    """Whether a `hold` task with this tag was cancelled, waiting up to `wait_ms` for it."""
    event = cancelled.setdefault(tag, anyio.Event())
    with anyio.move_on_after(wait_ms / 1000):
        await event.wait()
    return event.is_set()


@server.tool()
async def times_run(label: str) -> int:
    """How many times `slow_compute` started with this label (a resumed task is not started again)."""
    return runs.get(label, 0)


@server.tool()
async def wait_for_release(tag: str) -> str:
    """Run until `release(tag)` is called (ten minutes at most)."""
    runs[tag] = runs.get(tag, 0) + 1
    job = CURRENT_JOB.get()
    if job is not None:
        job_tags[job.task_id] = tag
        job.report(f"waiting for {tag}")
    try:
        with anyio.fail_after(600):
            await released.setdefault(tag, anyio.Event()).wait()
    except anyio.get_cancelled_exc_class():
        cancelled.setdefault(tag, anyio.Event()).set()
        raise
    return f"released {tag}"


@server.tool()
async def was_followed(tag: str, wait_ms: int = 60_000) -> bool:
    """Whether a client polled the `wait_for_release(tag)` task (its caller has its handle), waiting up
    to `wait_ms` for that."""
    event = followed.setdefault(tag, anyio.Event())
    with anyio.move_on_after(wait_ms / 1000):
        await event.wait()
    return event.is_set()


@server.tool()
async def release(tag: str) -> str:
    """End the `wait_for_release(tag)` task; says how often that one started (a task followed by
    another client is not started again)."""
    released.setdefault(tag, anyio.Event()).set()
    return f"released {tag}; started {runs.get(tag, 0)} time(s)"


@server.tool()
async def confirm_delete(filename: str) -> str:
    """Ask the user to confirm, then (pretend to) delete `filename`."""
    job = CURRENT_JOB.get()
    if job is None:
        return f"not deleted {filename}: no task to ask in"
    try:
        answer = await job.ask(_confirmation(f"Delete {filename}?"))
    except anyio.get_cancelled_exc_class():
        cancelled.setdefault(filename, anyio.Event()).set()
        raise
    content = answer.get("content") or {}
    if answer.get("action") == "accept" and content.get("confirm"):
        return f"deleted {filename}"
    return f"kept {filename} ({answer.get('action')})"


def _confirmation(message: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Confirm"}}}
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }


@server.tool()
async def multi_input() -> str:
    """Ask two questions at once (the harness answers them one at a time)."""
    job = CURRENT_JOB.get()
    if job is None:
        return "nothing asked: no task to ask in"
    async with anyio.create_task_group() as group:
        for question in ("First?", "Second?"):
            group.start_soon(job.ask, _confirmation(question))
    return "both answered"


@server.tool()
async def failing_job() -> str:
    """Fail as a tool (the task completes with an error result)."""
    await anyio.sleep(0.2)
    raise ToolError("the job failed")


@server.tool()
async def protocol_error_job() -> str:
    """Fail below the tool (the task fails with a JSON-RPC error)."""
    raise MCPError(mcp.INTERNAL_ERROR, "the job crashed")


if __name__ == "__main__":
    run(server)
