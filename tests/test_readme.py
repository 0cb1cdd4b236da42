"""The README is a contract: its Python snippets run as scripts, and its command lines run as written.

Each fenced `python` block runs as a script with the `demo` model (one that talks to `toolbridge serve`
at 127.0.0.1:8765 gets a server of its own, on a free port). Each `toolbridge` line of a fenced `sh`
block runs through a shell (pipes and all) when it needs no network and no placeholder; every line's
command and options are checked against the real `--help` either way. Everything runs in a scratch
directory whose toolbridge.json makes `demo` the default model, with no access to the user's own config
or database.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from toolbridge.cli.commands import app

README = Path(__file__).resolve().parent.parent / "README.md"
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_BRACKETS = re.compile(r"\[[^\[\]]*\]")
_PLACEHOLDER = re.compile(r"^[A-Z]+$")  # TOOL, FILE, ID, S ...
# Lines that would run until stopped: their syntax is still checked against --help.
_LONG_RUNNING = {"serve", "gateway"}
SERVE_ADDRESS = "127.0.0.1:8765"
"""Where `toolbridge serve` listens by default; snippets that talk to it get a server of their own."""


def blocks(language: str) -> list[str]:
    return [body for found, body in _FENCE.findall(README.read_text(encoding="utf-8")) if found == language]


def command_lines() -> list[str]:
    """Every `toolbridge ...` command in the sh blocks, without comments (`a && b` counts its last part)."""
    lines = []
    for block in blocks("sh"):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            last = line.split("&&")[-1].strip().removeprefix(".venv/bin/")
            if "toolbridge" in shlex.split(last.split(" | ")[-1])[:1]:
                lines.append(last)
    return lines


def runnable(line: str) -> str | None:
    """The line in its shortest form (optional parts left out), or None if it cannot run offline."""
    while _BRACKETS.search(line):
        line = _BRACKETS.sub("", line)
    words = shlex.split(line.split(" | ")[-1])
    if (words[1:2] and words[1] in _LONG_RUNNING) or any(_PLACEHOLDER.match(word) for word in words):
        return None
    return " ".join(line.split())


@pytest.fixture
def scratch(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A working directory whose config picks the demo model, and an environment that stays inside it."""
    (tmp_path / "toolbridge.json").write_text(json.dumps({"default_model": "demo"}))
    shim = tmp_path / "bin"
    shim.mkdir()
    toolbridge = shim / "toolbridge"  # this checkout's toolbridge, whatever is installed on PATH
    toolbridge.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m toolbridge "$@"\n')
    toolbridge.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": str(tmp_path / "config-home"),
        "XDG_DATA_HOME": str(tmp_path / "data-home"),
        "TOOLBRIDGE_DB": f"sqlite:///{tmp_path / 'toolbridge.db'}",
        "TOOLBRIDGE_CACHE_DIR": str(tmp_path / "cache"),
    }
    for name in ("TOOLBRIDGE_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    return tmp_path, env


def test_the_readme_has_the_snippets_this_test_runs() -> None:
    assert len(blocks("python")) >= 3
    assert any(line.startswith("toolbridge ask --model demo") for line in command_lines())
    assert any(line.startswith("echo") for line in command_lines())


@contextmanager
def served(snippet: str, cwd: Path, env: dict[str, str]) -> Iterator[str]:
    """The snippet, run against a `toolbridge serve` of its own when it talks to the endpoint (at a free
    port in place of 8765, so a server the user has running is left alone)."""
    if SERVE_ADDRESS not in snippet:
        yield snippet
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "toolbridge", "serve", "--port", str(port)]
    server = subprocess.Popen(command, cwd=cwd, env={**env, "TOOLBRIDGE_TOKEN": ""}, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert server.poll() is None, server.communicate()[1]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "toolbridge serve did not start"
            time.sleep(0.05)  # polling for readiness
        yield snippet.replace(SERVE_ADDRESS, f"127.0.0.1:{port}")
    finally:
        server.terminate()
        server.communicate(timeout=30)


@pytest.mark.parametrize("snippet", blocks("python"), ids=lambda s: s.strip().splitlines()[-1][:40])
def test_python_snippet_runs(snippet: str, scratch: tuple[Path, dict[str, str]]) -> None:
    cwd, env = scratch
    with served(snippet, cwd, env) as runnable_snippet:
        done = subprocess.run(
            [sys.executable, "-c", runnable_snippet],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=env,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    if "print(" in snippet:
        assert done.stdout.strip(), "the snippet printed nothing"
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("line", command_lines())
def test_command_line_names_real_commands_and_options(line: str) -> None:
    words = shlex.split(_BRACKETS.sub(" ", line.split(" | ")[-1]))[1:]
    command = [word for word in words[:2] if re.fullmatch(r"[a-z]+", word)]
    if len(command) == 2 and command[1] not in (
        "show",
        "create",
        "edit",
        "delete",
        "login",
        "status",
        "logout",
        "add",
        "remove",
        "revoke",
    ):
        command = command[:1]
    shown = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    for option in re.findall(r"(?<![\w-])(--[a-z-]+|-[a-z])\b", line.split(" | ")[-1]):
        assert option in shown.output, f"{option} is not an option of `toolbridge {' '.join(command)}`"


@pytest.mark.parametrize("line", [line for line in command_lines() if runnable(line)])
def test_command_line_runs_offline(line: str, scratch: tuple[Path, dict[str, str]]) -> None:
    cwd, env = scratch
    command = runnable(line)
    assert command is not None
    done = subprocess.run(
        ["sh", "-c", command], stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=cwd, env=env,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{command}\n{done.stderr}"
    assert "Traceback" not in done.stderr
