"""Codex CLI (npm `@openai/codex`, `codex exec`) on any model through `/v1/responses`: its own
`exec_command` tool reads a file in a temp folder, the scripted upstream behind `toolbridge serve` calls it
natively or leaks the call as text (Hermes, Qwen3 XML), and Codex's answer says what the file says. Its
config (a fresh CODEX_HOME) turns off update checks, analytics, feedback, OTel and plugins, so nothing
leaves 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from passthrough_helpers import passthrough_server, upstream

from loopback_only import loopback_only
from server_paths import PUBLISHED_SERVERS
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

NODE_BIN = PUBLISHED_SERVERS / "npm" / "node_modules" / ".bin"
SECRET = "The secret word is marmalade."
CONFIG = """model = "local"
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


@pytest.mark.parametrize("kind", ["native", "hermes", "qwen3-xml"])
def test_codex_reads_a_file_with_its_own_tool_on_any_model(tmp_path: Path, kind: str) -> None:
    codex = NODE_BIN / "codex"
    if not codex.exists():
        pytest.fail(f"Codex is not installed ({codex}): run scripts/install-test-servers")
    work, home = tmp_path / "work", tmp_path / "codex-home"
    work.mkdir()
    home.mkdir()
    (work / "notes.txt").write_text(SECRET + "\n")
    turns = [
        _exec_turn(kind),
        Turn.text("The file says the secret word is marmalade.").expecting(_result_holds_the_file),
    ]
    mode = "native" if kind == "native" else "prompt"
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, mode)}) as server,
    ):
        (home / "config.toml").write_text(CONFIG.format(url=server.url))
        env = {
            "PATH": f"{NODE_BIN}{os.pathsep}/usr/bin{os.pathsep}/bin",
            "HOME": str(home),
            "CODEX_HOME": str(home),
            "TOOLBRIDGE_KEY": server.token or "sk-local",
        }
        command = [str(codex), "exec", "--skip-git-repo-check", "What does notes.txt say?"]
        with loopback_only(urlsplit(server.url).port or 0, tmp_path) as wrap:
            done = subprocess.run(
                wrap(command), cwd=work, env=env, capture_output=True, text=True, timeout=150,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        problems = model.script_problems()

    assert done.returncode == 0, done.stderr
    assert "marmalade" in done.stdout
    assert problems == []
