"""Spans of the GenAI semantic conventions, and the metrics of the same events.

One run is `invoke_agent {agent}`; under it each model request is `chat {model}` and each tool call
`execute_tool {tool}`, under which the MCP SDK puts its own `MCP send tools/call {tool}` client span
(carrying `jsonrpc.request.id`, and the trace context to the server in `_meta`). The current span rides
in a context variable, so the anyio tasks a run starts for its calls nest under it.

opentelemetry-api comes with the MCP SDK; without an SDK tracer provider its spans are no-ops. The
numbers go to the installed meter (`_meter`: none unless `serve` or `gateway` installed Prometheus).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, StatusCode

from toolbridge.telemetry._meter import current_meter

__all__ = [
    "ModelRequestTrace",
    "RunTrace",
    "ToolCallTrace",
    "active_event_stream",
    "start_tool_span",
    "trace_model_request",
    "trace_run",
]

_tracer = trace.get_tracer("toolbridge")


@dataclass
class RunTrace:
    """What the run reports when it ends: `finish()` with its stop reason, steps and tokens."""

    span: Span
    agent: str
    stop_reason: str | None = None

    def finish(self, stop_reason: str, *, steps: int, input_tokens: int, output_tokens: int) -> None:
        self.stop_reason = stop_reason
        self.span.set_attributes(
            {
                "toolbridge.stop_reason": stop_reason,
                "toolbridge.steps": steps,
                "gen_ai.usage.input_tokens": input_tokens,
                "gen_ai.usage.output_tokens": output_tokens,
            }
        )
        if stop_reason not in ("final_answer", "cancelled"):
            self.span.set_attribute("error.type", stop_reason)
            self.span.set_status(StatusCode.ERROR, stop_reason)


@contextmanager
def trace_run(agent: str, model: str) -> Iterator[RunTrace]:
    """A span for one agent run; counts it as active while it lasts, and by stop reason once it ends."""
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.request.model": model,
    }
    meter = current_meter()
    meter.run_started()
    with _tracer.start_as_current_span(
        f"invoke_agent {agent}", kind=SpanKind.INTERNAL, attributes=attributes
    ) as span:
        run = RunTrace(span, agent)
        try:
            yield run
        except BaseException as error:
            if run.stop_reason is None:
                run.stop_reason = "cancelled" if _is_cancellation(error) else "error"
                span.set_attribute("error.type", type(error).__qualname__)
            raise
        finally:
            meter.run_ended(agent, run.stop_reason or "error")


@dataclass
class ModelRequestTrace:
    span: Span
    model: str
    outcome: str = "error"

    def finish(self, finish_reason: str | None, *, input_tokens: int, output_tokens: int) -> None:
        self.outcome = "ok"
        self.span.set_attributes(
            {"gen_ai.usage.input_tokens": input_tokens, "gen_ai.usage.output_tokens": output_tokens}
        )
        if finish_reason:
            self.span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
        current_meter().model_tokens(self.model, input_tokens, output_tokens)


@contextmanager
def trace_model_request(
    model: str, *, agent: str | None = None, provider: str | None = None
) -> Iterator[ModelRequestTrace]:
    """A `chat {model}` span around one model request (one agent step, counted as the `agent`'s; or a
    request passed through to the model), timed into the histogram."""
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
    if provider:
        attributes["gen_ai.provider.name"] = provider
    meter = current_meter()
    if agent is not None:
        meter.step(agent)
    started = time.perf_counter()
    with _tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes) as span:
        request = ModelRequestTrace(span, model)
        try:
            yield request
        except BaseException as error:
            request.outcome = "cancelled" if _is_cancellation(error) else "error"
            span.set_attribute("error.type", type(error).__qualname__)
            raise
        finally:
            meter.model_request(model, request.outcome, time.perf_counter() - started)


class ToolCallTrace:
    """An open `execute_tool {tool}` span, current until `end()`: the MCP SDK's client span nests under it."""

    def __init__(self, tool: str, call_id: str, caller: str) -> None:
        self.tool = tool
        attributes = {
            "toolbridge.caller": caller,
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": call_id,
            "gen_ai.tool.type": "function",
        }
        self.span = _tracer.start_span(f"execute_tool {tool}", kind=SpanKind.INTERNAL, attributes=attributes)
        # No tracer provider installed: a span of no trace, which nothing would see made current.
        traced = self.span.get_span_context().is_valid
        self._token = otel_context.attach(trace.set_span_in_context(self.span)) if traced else None

    def end(
        self,
        *,
        server: str | None,
        error_kind: str | None,
        duration: float,
        cached: bool,
        ran: bool,
        counted_as: str | None = None,
    ) -> None:
        """Close the span (in the task that opened it) with what came of the call, and count the call
        under `counted_as` (the tool it resolved to; default: the name it was called by)."""
        server = server or ""
        if self.span.is_recording():
            self.span.set_attributes(
                {
                    "toolbridge.tool.server": server,
                    "toolbridge.tool.cached": cached,
                    "toolbridge.tool.duration": duration,
                }
            )
            if error_kind is not None:
                self.span.set_attribute("error.type", error_kind)
                self.span.set_status(StatusCode.ERROR, error_kind)
        if self._token is not None:
            otel_context.detach(self._token)
        self.span.end()
        seconds = duration if ran and not cached else None
        tool = counted_as or self.tool
        current_meter().tool_call(tool, server, error_kind or "ok", seconds=seconds, cached=cached)

    def end_deferred(self) -> None:
        """Close the span of a call whose server asked its client for input first: not counted, as the
        client's next request, with the answers, is a call of its own."""
        self.span.set_attribute("toolbridge.tool.input_required", True)
        if self._token is not None:
            otel_context.detach(self._token)
        self.span.end()


def start_tool_span(tool: str, call_id: str, *, caller: str) -> ToolCallTrace:
    """Open the `execute_tool {tool}` span of one call, from the request to its result; `caller` says
    who made it (agent, gateway, openapi, cli, library)."""
    return ToolCallTrace(tool, call_id, caller)


@contextmanager
def active_event_stream() -> Iterator[None]:
    """Count an event stream as open for the duration of the block."""
    meter = current_meter()
    meter.event_streams(+1)
    try:
        yield
    finally:
        meter.event_streams(-1)


def _is_cancellation(error: BaseException) -> bool:
    import anyio  # the running backend decides which class cancellation is

    try:
        return isinstance(error, anyio.get_cancelled_exc_class())
    except Exception:  # no async backend running
        return False
