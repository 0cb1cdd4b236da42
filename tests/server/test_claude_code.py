"""Claude Code (npm `@anthropic-ai/claude-code`, in print mode) on any model through `/v1/messages`: its
own Read tool reads a file in a temp folder, the scripted upstream behind `toolbridge serve` calls it
natively or leaks the call as text (Hermes, Qwen3 XML), and Claude Code's answer says what the file says.
Everything stays on 127.0.0.1: Claude Code is told to send nothing beyond its model requests, and runs in
a network namespace with loopback only where `unshare` is allowed (`loopback_only`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from passthrough_helpers import passthrough_server, upstream
from server_helpers import RunningServer, serve_in_thread

from loopback_only import loopback_only
from server_paths import PUBLISHED_SERVERS, test_server_path
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

NODE_BIN = PUBLISHED_SERVERS / "npm" / "node_modules" / ".bin"
SECRET = "The secret word is marmalade."


def _read_call_turn(kind: str, path: Path) -> Turn:
    call = ToolCallSpec("Read", {"file_path": str(path)})
    if kind == "native":
        return Turn.tool_calls(call)
    if kind == "hermes":
        return Turn.calls_in_text(call, before="Let me read it.")
    return Turn.text(
        f"Let me read it.<tool_call>\n<function=Read>\n<parameter=file_path>\n{path}\n</parameter>\n"
        "</function>\n</tool_call>"
    )


def _result_holds_the_file(request: RecordedRequest) -> bool:
    return SECRET in str(request.last_message.get("content"))


def _run_claude(
    server: RunningServer, model_name: str, work: Path, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    """`claude -p "What does notes.txt say?"` in `work`, on `model_name` behind `server`, with Read allowed."""
    claude = NODE_BIN / "claude"
    if not claude.exists():
        pytest.fail(f"Claude Code is not installed ({claude}): run scripts/install-test-servers")
    env = {
        "PATH": f"{NODE_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(tmp_path),  # none of the user's own Claude Code settings
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": server.token or "sk-local",
        "ANTHROPIC_MODEL": model_name,
        "ANTHROPIC_SMALL_FAST_MODEL": model_name,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }
    command = [str(claude), "-p", "What does notes.txt say?", "--model", model_name, "--allowedTools", "Read"]
    with loopback_only(urlsplit(server.url).port or 0, tmp_path) as wrap:
        return subprocess.run(
            wrap(command), cwd=work, env=env, capture_output=True, text=True, timeout=150,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


def _notes(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "work"
    work.mkdir()
    notes = work / "notes.txt"
    notes.write_text(SECRET + "\n")
    return work, notes


@pytest.mark.parametrize("kind", ["native", "hermes", "qwen3-xml"])
def test_claude_code_reads_a_file_with_its_own_tool_on_any_model(tmp_path: Path, kind: str) -> None:
    work, notes = _notes(tmp_path)
    turns = [
        _read_call_turn(kind, notes),
        Turn.text("The file says the secret word is marmalade.").expecting(_result_holds_the_file),
    ]
    mode = "native" if kind == "native" else "prompt"
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, mode)}) as server,
    ):
        done = _run_claude(server, "local", work, tmp_path)
        problems = model.script_problems()

    assert done.returncode == 0, done.stderr
    assert "marmalade" in done.stdout
    assert problems == []
    first = model.requests[0]
    offered = first.tool_names if kind == "native" else str(first.messages[0]["content"])
    assert "Read" in offered


def _sees_the_echo_and_the_file(request: RecordedRequest) -> bool:
    results = [str(m["content"]) for m in request.messages if m["role"] == "tool"]
    return len(results) == 2 and "from the agent" in results[0] and SECRET in results[1]


def test_claude_code_on_an_agent_runs_its_own_tool_beside_the_agents_mcp_tool(tmp_path: Path) -> None:
    """`--model coder` names an agent of toolbridge's, whose MCP server (tests/servers/basic.py) runs `echo`
    in toolbridge; Claude Code's Read is offered beside it, runs in Claude Code, and the run resumes
    with both results when Claude Code sends the conversation back."""
    work, notes = _notes(tmp_path)
    turns = [
        Turn.tool_calls(ToolCallSpec("echo", {"text": "from the agent"})),
        Turn.tool_calls(ToolCallSpec("Read", {"file_path": str(notes)})),
        Turn.text("The file says the secret word is marmalade.").expecting(_sees_the_echo_and_the_file),
    ]
    basic = {"command": sys.executable, "args": [test_server_path("basic")]}
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"basic": basic}, agents={"coder": {}}) as server,
    ):
        done = _run_claude(server, "coder", work, tmp_path)
        problems = model.script_problems()

    assert done.returncode == 0, done.stderr
    assert "marmalade" in done.stdout
    assert problems == []
    assert {"echo", "Read"} <= set(model.requests[0].tool_names)
