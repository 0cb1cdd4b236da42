"""The README and the docs are a contract: their Python snippets run as scripts, their command lines run as
written, their config examples load, and the site builds.

The pages are README.md and every page under docs/. Each fenced `python` block runs as a script with the
`demo` model (one that talks to `toolbridge serve` at 127.0.0.1:8765 gets a server of its own, on a free
port). Each `toolbridge` line of a fenced `sh` block runs through a shell (pipes and all) when it needs no
network and no placeholder; every line's command and options are checked against the real `--help`
either way. Each `json` (or `jsonc`) block whose keys are all config keys loads as a config. Everything
runs in a scratch directory whose toolbridge.json makes `demo` the default model, with no access to the
user's own config or database. A snippet that appears on several pages runs once.
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
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from toolbridge.cli.commands import app
from toolbridge.config import Config, parse_config

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
_OPENING = re.compile(r"^(`{3,}|~{3,})\s*([\w-]*)")
_BRACKETS = re.compile(r"\[[^\[\]]*\]")
_PLACEHOLDER = re.compile(r"^[A-Z]+$")  # TOOL, FILE, ID, S ...
# Lines that would run until stopped: their syntax is still checked against --help.
_LONG_RUNNING = {"serve", "gateway"}
SERVE_ADDRESS = "127.0.0.1:8765"
"""Where `toolbridge serve` listens by default; snippets that talk to it get a server of their own."""
CONFIG_KEYS = (set(Config.model_fields) - {"path", "unresolved"}) | {"mcpServers"}


def fences(text: str) -> Iterator[tuple[str, str]]:
    """Each fenced block's language and body; a fence inside another (a ~~~~ block showing ```) is text."""
    opened: tuple[str, str] | None = None
    body: list[str] = []
    for line in text.splitlines(keepends=True):
        if opened is None:
            found = _OPENING.match(line)
            if found:
                opened, body = (found.group(1), found.group(2)), []
        elif line.startswith(opened[0]) and not line.strip().strip(opened[0][0]):
            yield opened[1], "".join(body)
            opened = None
        else:
            body.append(line)


def page_blocks(language: str, pages: list[Path] = PAGES) -> list[tuple[str, str]]:
    """(page, body) of every block in `language`, each body once (the first page it is on)."""
    seen: dict[str, str] = {}
    for page in pages:
        for found, body in fences(page.read_text(encoding="utf-8")):
            if found == language and body not in seen:
                seen[body] = page.relative_to(ROOT).as_posix()
    return [(page, body) for body, page in seen.items()]


def blocks(language: str, pages: list[Path] = PAGES) -> list[str]:
    return [body for _, body in page_blocks(language, pages)]


def command_lines(pages: list[Path] = PAGES) -> list[str]:
    """Every `toolbridge ...` command in the sh blocks, without comments (`a && b` counts its last part)."""
    lines = []
    for block in blocks("sh", pages):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            last = line.split("&&")[-1].strip().removeprefix(".venv/bin/")
            if "toolbridge" in shlex.split(last.split(" | ")[-1])[:1] and last not in lines:
                lines.append(last)
    return lines


def config_examples() -> list[tuple[str, Any]]:
    """(page, document) of every JSON block that is a config: its keys are all config keys (a `jsonc`
    block holds one document per line, after its `//` comments)."""
    examples = []
    for language in ("json", "jsonc"):
        for page, body in page_blocks(language):
            lines = [line for line in body.splitlines() if not line.lstrip().startswith("//")]
            documents = [json.loads(line) for line in lines] if language == "jsonc" else [json.loads(body)]
            examples += [
                (page, document)
                for document in documents
                if isinstance(document, dict) and document and set(document) <= CONFIG_KEYS
            ]
    return examples


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
    (tmp_path / "notes.txt").write_text("Meeting moved to 3 pm.\n")  # the file the pages' examples attach
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
    assert len(blocks("python", [README])) >= 3
    assert any(line.startswith("toolbridge ask --model demo") for line in command_lines([README]))
    assert any(line.startswith("echo") for line in command_lines([README]))


def test_the_docs_pages_have_the_snippets_this_test_runs() -> None:
    pages = sorted(DOCS.rglob("*.md"))
    assert len(pages) >= 15
    assert len(blocks("python", pages)) >= 12
    assert len(command_lines(pages)) >= 30
    assert {page for page, _ in config_examples()} >= {
        "README.md",
        "docs/configuration.md",
        "docs/gateway.md",
    }


def test_a_fence_inside_a_longer_fence_is_text() -> None:
    text = '~~~~\n<call>\n```json\n{"city": "Paris"}\n```</call>\n~~~~\n```sh\nls\n```\n'
    assert list(fences(text)) == [("", '<call>\n```json\n{"city": "Paris"}\n```</call>\n'), ("sh", "ls\n")]


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


@pytest.mark.slow
@pytest.mark.parametrize(
    "snippet",
    [
        pytest.param(body, id=f"{page}:{body.strip().splitlines()[-1][:40]}")
        for page, body in page_blocks("python")
    ],
)
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
    command = [word for word in words[:2] if re.fullmatch(r"[a-z][a-z-]*", word)]
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


@pytest.mark.slow
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


@pytest.mark.parametrize(
    "document",
    [pytest.param(document, id=f"{page}:{','.join(document)}") for page, document in config_examples()],
)
def test_config_example_loads(document: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in re.findall(r"\$\{(\w+)", json.dumps(document)):
        monkeypatch.setenv(variable, "a-value-of-32-characters-for-keys")
    parse_config(document)


@pytest.mark.slow
def test_the_docs_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`: every page in the nav, every link and anchor found, every docstring of the
    reference rendered without a warning."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    reference = (tmp_path / "site" / "reference" / "index.html").read_text(encoding="utf-8")
    assert 'id="toolbridge.agent.Agent.run_sync"' in reference


@pytest.mark.slow
def test_a_new_users_journey_through_the_readme(scratch: tuple[Path, dict[str, str]]) -> None:
    """The README's first command, then its `ask` lines (stdin, -c, -o) and `history` search and delete,
    in the README's order, in one place as a new user would: each builds on what the one before stored.
    (The install itself is `test_packaging`'s.)"""
    cwd, env = scratch
    first = shlex.split(blocks("sh", [README])[0].split("&&")[-1])
    assert first[0].endswith("toolbridge")
    lines = [
        line
        for line in command_lines([README])
        if line.split(" | ")[-1].split()[1:2] in (["ask"], ["history"])
    ]
    asked = [line for line in lines if " ask" in line]
    assert any(" -c " in line for line in asked)
    assert any(" -o " in line for line in asked)
    assert any(line.startswith("echo") and line.endswith('"') for line in asked)  # stdin and a question

    def run(command: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            ["sh", "-c", command], stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=cwd, env=env,
            timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        assert "Traceback" not in done.stderr
        return done

    assert "[demo model] 15 + 27 = 42" in run(shlex.join(["toolbridge", *first[1:]])).stdout
    for line in lines:
        if line.startswith("toolbridge history delete"):
            found = json.loads(run('toolbridge history -q "15 + 27" --json').stdout)
            assert len(found) >= 2  # the first command's chat, and the stdin one
            run(line.replace("ID", str(found[-1]["id"])))  # the oldest: the first command's
            assert [chat["id"] for chat in json.loads(run("toolbridge history --json").stdout)].count(
                found[-1]["id"]
            ) == 0
        else:
            run(line)
    chats = json.loads(run("toolbridge history --json").stdout)
    # `-c` asked in the chat before it: that chat holds both questions, no chat of its own.
    continued = [chat for chat in chats if chat["title"].startswith("Lunch: 15 + 27")]
    assert len(continued) == 1
    shown = json.loads(run(f"toolbridge history show {continued[0]['id']} --json").stdout)
    assert "And what is 2 + 2?" in [message.get("content") for message in shown["messages"]]


def test_the_readme_names_the_variables_a_stdio_server_gets() -> None:
    """What the MCP SDK passes a stdio server from our environment (besides its `env`), as the README says."""
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

    said = README.read_text(encoding="utf-8").split("A stdio server gets only", 1)[1].split("from your", 1)[0]
    assert sorted(re.findall(r"`(\w+)`", said)) == sorted(DEFAULT_INHERITED_ENV_VARS)
