"""Servers asking `toolbridge serve`: through the OpenAI endpoint nobody can be asked, so sampling is
declined unless the server's config allows it without approval, and elicitation is declined."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from server_helpers import serve_in_thread

from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

TESTS = Path(__file__).resolve().parents[1]
QUESTION = [{"role": "user", "content": "Go."}]


def asker(**extra: Any) -> dict[str, Any]:
    return {
        "asker": {"command": sys.executable, "args": [str(TESTS / "servers" / "asks_client.py")], **extra}
    }


def tool_result_has(text: str) -> Any:
    def check(request: RecordedRequest) -> bool:
        return request.last_message["role"] == "tool" and text in request.last_message["content"]

    return check


def test_sampling_needing_approval_and_elicitation_are_declined_with_the_reason(tmp_path: Path) -> None:
    turns = [
        Turn.tool_calls(ToolCallSpec("summarize", {"text": "x"})),
        Turn.text("no.", expect=tool_result_has("Sampling declined: toolbridge serve has nobody to ask")),
        Turn.tool_calls(ToolCallSpec("ask_contact", {})),
        Turn.text("no.", expect=tool_result_has("Elicitation declined: toolbridge serve has nobody to ask")),
    ]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model, mcp_servers=asker()) as server:
        for _ in range(2):
            server.openai().chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]


def test_sampling_allowed_by_the_config_is_answered_by_the_default_model(tmp_path: Path) -> None:
    turns = [
        Turn.tool_calls(ToolCallSpec("summarize", {"text": "a long text"})),
        Turn.text("short.", expect=lambda r: r.messages[0]["content"] == "Summarize in one line."),
        Turn.text("Done.", expect=tool_result_has("short.")),
    ]
    servers = asker(sampling={"approval": "never"})
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model, mcp_servers=servers) as server:
        completion = server.openai().chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "Done."
