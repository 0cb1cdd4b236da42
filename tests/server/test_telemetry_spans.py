"""Traces of a real run (scripted model over the OpenAI wire, a real MCP server over stdio), caught with
the OpenTelemetry SDK's in-memory exporter: one `invoke_agent` span, a `chat` span per model request and
an `execute_tool` span per call, nested, with the GenAI semantic conventions' attributes; the MCP SDK's
own client span sits under the tool's span and names the JSON-RPC request."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from opentelemetry import trace
from server_helpers import serve_in_thread

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn
from tracing_helpers import by_name, in_memory_spans

NOTEBOOK = {
    "command": sys.executable,
    "args": [str(Path(__file__).parent.parent / "servers" / "notebook.py")],
}


def test_a_run_is_traced_with_nested_genai_spans(tmp_path: Path) -> None:
    exporter = in_memory_spans()
    turns = [
        Turn.tool_calls(ToolCallSpec("write_note", {"name": "n", "text": "hi"})).with_usage(11, 3),
        Turn.text("Noted.").with_usage(20, 2),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"notebook": NOTEBOOK}) as server,
    ):
        answer = server.openai().chat.completions.create(
            model="default", messages=[{"role": "user", "content": "Note hi."}]
        )
    assert answer.choices[0].message.content == "Noted."
    spans = exporter.get_finished_spans()

    [run] = by_name(spans, "invoke_agent default")
    assert run.attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "default"
    assert run.attributes["gen_ai.usage.input_tokens"] == 31
    assert run.attributes["gen_ai.usage.output_tokens"] == 5
    assert run.attributes["toolbridge.stop_reason"] == "final_answer"

    chats = by_name(spans, "chat scripted")
    assert len(chats) == 2
    assert all(chat.parent is not None and chat.parent.span_id == run.context.span_id for chat in chats)
    first, second = sorted(chats, key=lambda span: span.start_time or 0)
    assert first.attributes is not None
    assert second.attributes is not None
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.request.model"] == "scripted"
    assert first.attributes["gen_ai.usage.input_tokens"] == 11
    assert first.attributes["gen_ai.usage.output_tokens"] == 3
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    assert second.attributes["gen_ai.response.finish_reasons"] == ("stop",)

    [tool] = by_name(spans, "execute_tool write_note")
    assert tool.parent is not None
    assert tool.parent.span_id == run.context.span_id
    assert tool.attributes is not None
    assert tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "write_note"
    assert str(tool.attributes["gen_ai.tool.call.id"]).startswith("call")
    assert tool.attributes["toolbridge.tool.server"] == "notebook"
    assert tool.attributes["toolbridge.tool.cached"] is False
    assert "error.type" not in tool.attributes

    # The MCP SDK's client span nests under ours (not beside it), and its request id is on ours too.
    [mcp_call] = by_name(spans, "MCP send tools/call write_note")
    assert mcp_call.parent is not None
    assert mcp_call.parent.span_id == tool.context.span_id
    assert mcp_call.attributes is not None
    assert tool.attributes["mcp.request.id"] == mcp_call.attributes["jsonrpc.request.id"]
    assert len({span.context.trace_id for span in (run, *chats, tool, mcp_call)}) == 1


@pytest.mark.slow
def test_a_failed_tool_call_marks_its_span_with_the_error_kind(tmp_path: Path) -> None:
    exporter = in_memory_spans()
    turns = [Turn.tool_calls(ToolCallSpec("no_such_tool", {})), Turn.text("It failed.")]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"notebook": NOTEBOOK}) as server,
    ):
        server.openai().chat.completions.create(
            model="default", messages=[{"role": "user", "content": "Go."}]
        )
    [tool] = by_name(exporter.get_finished_spans(), "execute_tool no_such_tool")
    assert tool.attributes is not None
    assert tool.attributes["error.type"] == "unknown_tool"
    assert tool.status.status_code == trace.StatusCode.ERROR


def test_a_request_passed_through_to_a_model_is_a_chat_span(tmp_path: Path) -> None:
    exporter = in_memory_spans()
    with (
        ScriptedModelServer([Turn.text("Hello.").with_usage(7, 2)]) as model,
        serve_in_thread(tmp_path, model) as server,
    ):
        server.openai().chat.completions.create(
            model="scripted", messages=[{"role": "user", "content": "Hi."}]
        )
    spans = exporter.get_finished_spans()
    [chat] = by_name(spans, "chat scripted")
    assert not [span for span in spans if span.name.startswith("invoke_agent")]  # no agent ran
    # It nests under the HTTP request's span (FastAPI makes one when a tracer provider is set).
    [request] = by_name(spans, "POST /v1/chat/completions")
    assert chat.context.trace_id == request.context.trace_id
    assert chat.attributes is not None
    assert chat.attributes["gen_ai.usage.input_tokens"] == 7
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("stop",)
