"""The call pipeline's steps, in order (resolve -> filter -> approval -> validate -> cache -> dispatch),
and what its observers hear: in-process over Python tools, and one real MCP server over stdio."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as mcp
import pytest
from opentelemetry import trace

from tool_helpers import shout, wait_forever
from toolbridge.config import CacheConfig, Config
from toolbridge.config.agents import ApprovalPolicy
from toolbridge.config.model import ServerConfig
from toolbridge.errors import ToolError
from toolbridge.tools import (
    ApprovalRequest,
    CallContext,
    CallDeferred,
    CallRecord,
    Toolbox,
    ToolPipeline,
    ToolRegistry,
    refusals,
)
from toolbridge.tools.cache import ResultCache
from toolbridge.types import ToolCall, ToolResult
from tracing_helpers import by_name, in_memory_spans

pytestmark = pytest.mark.anyio

ALWAYS = ApprovalPolicy(default="always")
REASON = "the default approval rule says 'always'"


class Heard:
    """An observer that writes down what it is told."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.ended: list[ToolResult] = []
        self.records: list[CallRecord] = []

    def call_started(self, record: CallRecord) -> None:
        self.started.append(record.call.id)

    async def call_ended(self, record: CallRecord) -> None:
        self.ended.append(record.result)
        self.records.append(record)


class Approver:
    """Answers approval questions as told, and writes them down."""

    def __init__(self, answer: bool | BaseException = True) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer


def pipeline_of(*observers: Any) -> ToolPipeline:
    return ToolPipeline(ToolRegistry(native=[shout, wait_forever]), list(observers))


async def test_an_unknown_tool_is_refused_before_anyone_is_asked() -> None:
    approver = Approver()
    outcome = await pipeline_of().call(
        ToolCall(name="shot", arguments={"text": "x"}), CallContext(approval=ALWAYS, approve=approver)
    )
    assert (outcome.result.error_kind, outcome.result.server) == ("unknown_tool", None)
    assert outcome.result.text == str(refusals.unknown_tool("shot", ["shout", "wait_forever"]))
    assert approver.asked == []


async def test_a_tool_the_caller_may_not_use_is_refused_with_the_reason_before_approval() -> None:
    approver = Approver()
    why = "the token 'ci' leaves it out"
    context = CallContext(
        allows=lambda spec: why if spec.name == "shout" else None, approval=ALWAYS, approve=approver
    )
    pipeline = pipeline_of()
    outcome = await pipeline.call(ToolCall(name="shout", arguments={"text": "x"}), context)
    spec = await pipeline.registry.find("shout")
    assert spec is not None
    assert outcome.result.text == str(refusals.not_allowed(spec, why))
    assert why in outcome.result.text
    assert (outcome.result.error_kind, outcome.result.server) == ("not_allowed", "native")
    assert approver.asked == []
    assert await pipeline.find("shout", context) is None
    assert await pipeline.find("wait_forever", context) is not None


async def test_approval_outcomes_each_say_why_the_call_did_not_run() -> None:
    pipeline = pipeline_of()
    spec = await pipeline.registry.find("shout")
    assert spec is not None
    call = ToolCall(name="shout", arguments={"text": "x"})

    nobody = await pipeline.call(call, CallContext(approval=ALWAYS))
    declined = await pipeline.call(call, CallContext(approval=ALWAYS, approve=Approver(False)))
    refused = ToolError("Approvals are off for this token, so it did not run.", tool="shout")
    raised = await pipeline.call(call, CallContext(approval=ALWAYS, approve=Approver(refused)))
    approved = await pipeline.call(call, CallContext(approval=ALWAYS, approve=Approver(True)))

    assert (nobody.result.text, nobody.result.error_kind) == (
        str(refusals.unapproved(spec, REASON)),
        "denied",
    )
    assert (declined.result.text, declined.result.error_kind) == (str(refusals.declined(spec)), "denied")
    assert (raised.result.text, raised.result.server) == (str(refused), "native")
    assert (approved.result.is_error, approved.result.text) == (False, "X")


async def test_a_deferred_approval_propagates_and_the_observers_hear_nothing() -> None:
    heard = Heard()
    reply = object()
    context = CallContext(approval=ALWAYS, approve=Approver(CallDeferred(reply)))
    with pytest.raises(CallDeferred) as deferred:
        await pipeline_of(heard).call(ToolCall(name="shout", arguments={"text": "x"}), context)
    assert deferred.value.reply is reply
    # Told nothing at all: no span left open, no row, until the call is made again with its answer.
    assert (heard.started, heard.ended) == ([], [])


async def test_arguments_are_validated_after_approval() -> None:
    approver = Approver(True)
    outcome = await pipeline_of().call(
        ToolCall(name="shout", arguments={"text": 3, "extra": True}),
        CallContext(approval=ALWAYS, approve=approver),
    )
    assert [request.call.name for request in approver.asked] == ["shout"]
    assert outcome.result.error_kind == "invalid_arguments"


async def test_observers_hear_of_every_call_once_however_it_ends() -> None:
    heard = Heard()
    pipeline = pipeline_of(heard)
    await pipeline.call(ToolCall(id="ok", name="shout", arguments={"text": "x"}))
    await pipeline.call(ToolCall(id="unknown", name="nope"))
    await pipeline.call(ToolCall(id="invalid", name="shout", arguments={}))
    await pipeline.call(ToolCall(id="declined", name="shout"), CallContext(approval=ALWAYS))
    assert heard.started == ["ok", "unknown", "invalid", "declined"]
    assert [(r.call_id, r.error_kind) for r in heard.ended] == [
        ("ok", None),
        ("unknown", "unknown_tool"),
        ("invalid", "invalid_arguments"),
        ("declined", "denied"),
    ]
    assert [record.ran for record in heard.records] == [True, False, False, False]


@pytest.mark.parametrize("waiting_for", ["the tool", "approval"])
async def test_a_cancelled_call_is_told_once_as_cancelled(waiting_for: str) -> None:
    heard = Heard()
    pipeline = pipeline_of(heard)

    async def never_answers(request: ApprovalRequest) -> bool:
        await anyio.Event().wait()
        return True

    call = (
        ToolCall(id="c1", name="wait_forever")
        if waiting_for == "the tool"
        else ToolCall(id="c1", name="shout")
    )
    context = (
        CallContext(approval=ALWAYS, approve=never_answers) if waiting_for == "approval" else CallContext()
    )
    async with anyio.create_task_group() as group:
        group.start_soon(pipeline.call, call, context)
        await anyio.wait_all_tasks_blocked()
        group.cancel_scope.cancel()
    assert heard.started == ["c1"]
    assert [(r.call_id, r.error_kind, r.server) for r in heard.ended] == [("c1", "cancelled", "native")]
    assert heard.ended[0].text == "The call was cancelled."


async def test_answered_tells_the_observers_of_a_call_that_did_not_run() -> None:
    heard = Heard()
    call = ToolCall(id="bad", name="shout")
    result = ToolResult.error("bad", "The arguments were not JSON.", kind="invalid_arguments")
    await pipeline_of(heard).answered(call, result, CallContext(caller="agent", chat_id=7))
    assert heard.started == ["bad"]
    assert heard.ended == [result]
    assert (heard.records[0].context.chat_id, heard.records[0].ran) == (7, False)


async def test_a_cache_that_keeps_nothing_is_not_consulted() -> None:
    # `shout` may write (it has no readOnlyHint): with a cache on, it drops its source's entries twice.
    generations = []
    for cache in (ResultCache(), ResultCache(CacheConfig(ttl=300))):
        registry = ToolRegistry(native=[shout], cache=cache)
        await ToolPipeline(registry).call(ToolCall(name="shout", arguments={"text": "x"}))
        generations.append(cache.generation("native"))
    assert generations == [0, 2]


async def test_the_outcome_carries_the_servers_own_result_and_none_for_a_python_tool(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    async with Toolbox(Config(servers={"basic": stdio_server("basic")}), tools=[shout]) as box:
        from_server = await box.calls.call(ToolCall(name="add", arguments={"a": 2, "b": 40}))
        from_python = await box.calls.call(ToolCall(name="shout", arguments={"text": "x"}))
    assert isinstance(from_server.raw, mcp.CallToolResult)
    assert from_server.raw.structured_content == {"result": 42}
    assert from_server.result.text == "42"
    assert (from_python.raw, from_python.result.text) == (None, "X")


async def test_every_call_is_a_span_the_mcp_client_span_nests_under_and_a_deferred_one_leaves_none(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    exporter = in_memory_spans()
    deferring = CallContext(approval=ALWAYS, approve=Approver(CallDeferred(None)))
    async with Toolbox(Config(servers={"basic": stdio_server("basic")}), native=False) as box:
        await box.calls.call(ToolCall(id="c1", name="add", arguments={"a": 1, "b": 2}))
        await box.calls.call(ToolCall(id="c2", name="nope"))
        with pytest.raises(CallDeferred):
            await box.calls.call(ToolCall(id="c3", name="add", arguments={"a": 1, "b": 2}), deferring)
        assert not trace.get_current_span().get_span_context().is_valid, "a span was left current"
    spans = exporter.get_finished_spans()

    [add] = by_name(spans, "execute_tool add")
    assert add.attributes is not None
    assert (add.attributes["gen_ai.tool.call.id"], add.attributes["toolbridge.tool.server"]) == (
        "c1",
        "basic",
    )
    [mcp_call] = by_name(spans, "MCP send tools/call add")
    assert mcp_call.parent is not None
    assert mcp_call.parent.span_id == add.context.span_id
    [unknown] = by_name(spans, "execute_tool nope")
    assert unknown.attributes is not None
    assert unknown.attributes["error.type"] == "unknown_tool"
    assert len([span for span in spans if span.name.startswith("execute_tool")]) == 2


@pytest.mark.parametrize("revisions", [[], ["--both-revisions"]], ids=["2025-11-25", "2026-07-28"])
async def test_the_call_carries_its_trace_to_the_server_in_meta(
    stdio_server: Callable[..., ServerConfig], revisions: list[str]
) -> None:
    exporter = in_memory_spans()
    reports = stdio_server("reports")
    reports = reports.model_copy(update={"args": [*reports.args, *revisions]})
    async with Toolbox(Config(servers={"reports": reports}), native=False) as box:
        result = await box.call("trace_context")
    [mcp_call] = by_name(exporter.get_finished_spans(), "MCP send tools/call trace_context")
    [ours] = by_name(exporter.get_finished_spans(), "execute_tool trace_context")
    version, trace_id, parent_id, _ = result.text.split("-")
    # The server's request names our trace, under the SDK's span of the request, under ours.
    assert (version, int(trace_id, 16)) == ("00", ours.context.trace_id)
    assert int(parent_id, 16) == mcp_call.context.span_id
    assert mcp_call.parent is not None
    assert mcp_call.parent.span_id == ours.context.span_id
