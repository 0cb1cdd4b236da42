"""What a gateway call leaves behind, from the call pipeline's observers: a call-log row with the caller
"gateway" (written off the event loop, in batches, and whole once the gateway stops), an `execute_tool`
span and the tool-call metrics; and the name is looked up once per call."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from mcp import Client
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from toolbridge.config.model import Config
from toolbridge.gateway import Gateway
from toolbridge.store import CallLog, ToolCallLogEntry
from toolbridge.store.call_log import BackgroundCallLog
from toolbridge.telemetry.metrics import METRICS, install_metrics
from toolbridge.tools import Toolbox, ToolRegistry
from toolbridge.types import ToolCall, ToolResult
from tracing_helpers import in_memory_spans

pytestmark = pytest.mark.anyio


def _logged(n: int) -> ToolCallLogEntry:
    call = ToolCall(name="echo", arguments={"n": n}, id=f"call_{n}")
    result = ToolResult(call_id=call.id, server="basic")
    return ToolCallLogEntry.from_result(call, result, started_at=datetime.now(UTC), caller="gateway")


async def _let_the_writer_run() -> None:
    for _ in range(20):  # every ready task gets its turn: the writer takes what is queued
        await anyio.lowlevel.checkpoint()


async def test_calls_made_while_a_batch_lingers_are_written_in_one_go_when_the_gateway_stops() -> None:
    batches: list[list[str]] = []

    def write(entries: Sequence[ToolCallLogEntry]) -> None:
        batches.append([entry.call_id for entry in entries])

    # A linger far longer than the test: only leaving `running()` can have ended it.
    log = BackgroundCallLog(write, linger=600)
    with anyio.fail_after(20):
        async with log.running():
            log.add(_logged(1))
            await _let_the_writer_run()  # without the linger, call 1 would be written alone now
            log.add(_logged(2))
            await _let_the_writer_run()
            assert batches == []
    assert batches == [["call_1", "call_2"]]


async def test_a_call_log_that_cannot_be_written_does_not_stop_the_gateway() -> None:
    def write(entries: Sequence[ToolCallLogEntry]) -> None:
        raise OSError("disk full")

    log = BackgroundCallLog(write, linger=0)
    with anyio.fail_after(20):
        async with log.running():
            log.add(_logged(1))
            await _let_the_writer_run()
            log.add(_logged(2))
    # Leaving `running()` raised nothing: the failures were logged, and serving went on.


async def test_the_gateways_calls_are_logged_in_a_batch_with_their_caller(stdio_server: Any) -> None:
    logged: list[ToolCallLogEntry] = []
    async with Toolbox(Config(servers={"basic": stdio_server("basic")}), native=False) as toolbox:
        gateway = Gateway(toolbox, call_log=CallLog(logged.extend, linger=600))
        with anyio.fail_after(30):
            async with gateway.running(), Client(gateway.server) as client:
                assert not (await client.call_tool("echo", {"text": "hi"})).is_error
                assert (await client.call_tool("no_such_tool", {})).is_error
                assert logged == []  # queued: written when the gateway stops
    assert [(entry.tool, entry.server, entry.status, entry.caller) for entry in logged] == [
        ("echo", "basic", "ok", "gateway"),
        ("no_such_tool", "", "error", "gateway"),
    ]
    assert logged[1].error_kind == "unknown_tool"


def _tool_calls(tool: str, server: str, outcome: str) -> float:
    """The `toolbridge_tool_calls` counter as Prometheus reads it (cumulative in this process)."""
    for family in text_string_to_metric_families(generate_latest(METRICS).decode()):
        for sample in family.samples:
            labels = {"tool": tool, "server": server, "outcome": outcome}
            if sample.name == "toolbridge_tool_calls_total" and sample.labels == labels:
                return sample.value
    return 0.0


async def test_a_gateway_call_gets_an_execute_tool_span_and_is_counted(stdio_server: Any) -> None:
    exporter = in_memory_spans()
    install_metrics()  # as `toolbridge gateway` does
    before = _tool_calls("echo", "basic", "ok")
    async with Toolbox(Config(servers={"basic": stdio_server("basic")}), native=False) as toolbox:
        with anyio.fail_after(30):
            async with Client(Gateway(toolbox).server) as client:
                assert not (await client.call_tool("echo", {"text": "hi"})).is_error
    [span] = [span for span in exporter.get_finished_spans() if span.name == "execute_tool echo"]
    assert span.attributes is not None
    assert span.attributes["gen_ai.tool.name"] == "echo"
    assert _tool_calls("echo", "basic", "ok") == before + 1


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names the registry was asked to look up, by any of its lookups."""
    names: list[str] = []
    for method in ("resolve", "find"):
        original = getattr(ToolRegistry, method)

        def counting(self: ToolRegistry, name: str, *args: Any, _original: Any = original, **kw: Any) -> Any:
            names.append(name)
            return _original(self, name, *args, **kw)

        monkeypatch.setattr(ToolRegistry, method, counting)
    return names


async def test_the_gateway_looks_each_name_up_once_per_call(stdio_server: Any, lookups: list[str]) -> None:
    async with Toolbox(Config(servers={"basic": stdio_server("basic")}), native=False) as toolbox:
        with anyio.fail_after(30):
            async with Client(Gateway(toolbox).server) as client:
                await client.list_tools()
                lookups.clear()
                assert not (await client.call_tool("echo", {"text": "hi"})).is_error
                assert (await client.call_tool("add", {"a": 1})).is_error  # bad arguments
                assert (await client.call_tool("no_such_tool", {})).is_error
    assert lookups == ["echo", "add", "no_such_tool"]
