"""Traces over real OTLP/HTTP: a `toolbridge serve` process given `telemetry.otlp_endpoint` sends its
spans to a receiver in the test (an HTTP server on 127.0.0.1 decoding the protobuf with
opentelemetry-proto), batched and flushed at the latest when the process stops."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from otlp_receiver import attributes, receiver
from server_helpers import start_process, write_config

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

NOTEBOOK = {
    "command": sys.executable,
    "args": [str(Path(__file__).parent.parent / "servers" / "notebook.py")],
}


def test_spans_reach_an_otlp_http_receiver(tmp_path: Path) -> None:
    turns = [Turn.tool_calls(ToolCallSpec("read_note", {"name": "n"})).with_usage(9, 4), Turn.text("Read.")]
    with receiver() as otlp, ScriptedModelServer(turns) as model:
        config = write_config(tmp_path, model, mcp_servers={"notebook": NOTEBOOK})
        data = config.read_text().replace(
            '"agents"',
            f'"telemetry": {{"otlp_endpoint": "http://127.0.0.1:{otlp.server_port}"}}, "agents"',
            1,
        )
        config.write_text(data)
        running = start_process(config, f"sqlite:///{tmp_path / 'chats.db'}")
        try:
            running.server.openai().chat.completions.create(
                model="default", messages=[{"role": "user", "content": "Read n."}]
            )
        finally:
            running.stop()  # the batch processor flushes on the way out
        assert running.process.returncode == 0

    assert set(otlp.paths) == {"/v1/traces"}
    spans = {span.name: span for service, span in otlp.spans if service == "toolbridge"}
    run, tool = spans["invoke_agent default"], spans["execute_tool read_note"]
    chats = [span for service, span in otlp.spans if span.name == "chat scripted"]
    assert [chat.parent_span_id for chat in chats] == [run.span_id, run.span_id]
    assert tool.parent_span_id == run.span_id
    assert 9 in [attributes(chat)["gen_ai.usage.input_tokens"] for chat in chats]
    assert attributes(tool)["toolbridge.tool.server"] == "notebook"
    mcp_call = spans["MCP send tools/call read_note"]
    assert mcp_call.parent_span_id == tool.span_id
    assert attributes(tool)["mcp.request.id"] == attributes(mcp_call)["jsonrpc.request.id"]
