"""Codex CLI (npm `@openai/codex`, `codex exec`) on any model through `/v1/responses`: its own
`exec_command` tool reads a file in a temp folder, the scripted upstream behind `toolbridge serve` calls it
natively or leaks the call as text (Hermes, Qwen3 XML), and Codex's answer says what the file says. Its
config (a fresh CODEX_HOME) turns off update checks, analytics, feedback, OTel and plugins, so nothing
leaves 127.0.0.1."""

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
CONFIG = """model = "{model}"
model_provider = "toolbridge"
approval_policy = "never"
# No bubblewrap in the test machine's containers: the command runs unsandboxed, in the test's temp folder.
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.toolbridge]
name = "toolbridge"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "TOOLBRIDGE_KEY"

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

[features]
plugins = false
"""


def _exec_turn(kind: str) -> Turn:
    call = ToolCallSpec("exec_command", {"cmd": "cat notes.txt"})
    if kind == "native":
        return Turn.tool_calls(call)
    if kind == "hermes":
        return Turn.calls_in_text(call, before="Let me read it.")
    return Turn.text(
        "Let me read it.<tool_call>\n<function=exec_command>\n<parameter=cmd>\ncat notes.txt\n</parameter>\n"
        "</function>\n</tool_call>"
    )


def _result_holds_the_file(request: RecordedRequest) -> bool:
    return SECRET in str(request.last_message.get("content"))


def _run_codex(server: RunningServer, model_name: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`codex exec "What does notes.txt say?"` in a temp folder holding notes.txt, on `model_name`."""
    codex = NODE_BIN / "codex"
    if not codex.exists():
        pytest.fail(f"Codex is not installed ({codex}): run scripts/install-test-servers")
    work, home = tmp_path / "work", tmp_path / "codex-home"
    work.mkdir()
    home.mkdir()
    (work / "notes.txt").write_text(SECRET + "\n")
    (home / "config.toml").write_text(CONFIG.format(url=server.url, model=model_name))
    env = {
        "PATH": f"{NODE_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home),
        "CODEX_HOME": str(home),
        "TOOLBRIDGE_KEY": server.token or "sk-local",
    }
    command = [str(codex), "exec", "--skip-git-repo-check", "What does notes.txt say?"]
    with loopback_only(urlsplit(server.url).port or 0, tmp_path) as wrap:
        return subprocess.run(
            wrap(command), cwd=work, env=env, capture_output=True, text=True, timeout=150,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip


@pytest.mark.parametrize("kind", ["native", "hermes", "qwen3-xml"])
def test_codex_reads_a_file_with_its_own_tool_on_any_model(tmp_path: Path, kind: str) -> None:
    turns = [
        _exec_turn(kind),
        Turn.text("The file says the secret word is marmalade.").expecting(_result_holds_the_file),
    ]
    mode = "native" if kind == "native" else "prompt"
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, mode)}) as server,
    ):
        done = _run_codex(server, "local", tmp_path)
        problems = model.script_problems()

    assert done.returncode == 0, done.stderr
    assert "marmalade" in done.stdout
    assert problems == []


def _sees_the_echo_and_the_file(request: RecordedRequest) -> bool:
    results = [str(m["content"]) for m in request.messages if m["role"] == "tool"]
    return len(results) == 2 and "from the agent" in results[0] and SECRET in results[1]


def test_codex_on_an_agent_runs_its_own_tool_beside_the_agents_mcp_tool(tmp_path: Path) -> None:
    """`model = "coder"` names an agent of toolbridge's, whose MCP server (tests/servers/basic.py) runs
    `echo` in toolbridge; Codex's exec_command is offered beside it, runs in Codex, and the run resumes
    with both results when Codex sends the conversation back (`store: false`, the output items as they came)."""
    turns = [
        Turn.tool_calls(ToolCallSpec("echo", {"text": "from the agent"})),
        _exec_turn("native"),
        Turn.text("The file says the secret word is marmalade.").expecting(_sees_the_echo_and_the_file),
    ]
    basic = {"command": sys.executable, "args": [test_server_path("basic")]}
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"basic": basic}, agents={"coder": {}}) as server,
    ):
        done = _run_codex(server, "coder", tmp_path)
        problems = model.script_problems()

    assert done.returncode == 0, done.stderr
    assert "marmalade" in done.stdout
    assert problems == []
    assert {"echo", "exec_command"} <= set(model.requests[0].tool_names)
