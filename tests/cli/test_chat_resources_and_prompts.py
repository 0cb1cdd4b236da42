"""Resources and prompts in `toolbridge chat`, through the real CLI: `@server:uri` attaches a resource,
`/prompts` lists, `/prompt NAME key=value` sends a prompt's messages, and Tab completes them in a
terminal (a pseudo-terminal here)."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli.cli_helpers import TOOLBRIDGE, environment, toolbridge
from toolbridge.config.model import ServerConfig
from toolbridge.testing import ScriptedModelServer, Turn

pytestmark = pytest.mark.slow


def config_with_library(tmp_path: Path, model: ScriptedModelServer, library: ServerConfig) -> Path:
    path = tmp_path / "toolbridge.json"
    document: dict[str, Any] = {
        "mcpServers": {"library": {"command": library.command, "args": library.args}},
        "models": {"scripted": {"provider": "openai-compatible", "base_url": model.base_url, "model": "s"}},
        "default_model": "scripted",
        "agents": {"default": {"tool_calling": False}},
    }
    path.write_text(json.dumps(document))
    return path


def last_user_content(request: Any) -> Any:
    return request.last_message["content"]


def test_attachments_and_prompts_in_chat(tmp_path: Path, stdio_server: Callable[..., ServerConfig]) -> None:
    script = [
        Turn.text("Reviewed.").expecting(
            lambda request: last_user_content(request) == "Review this rust code:\nx = 1"
        ),
        Turn.text("It says to read it first.").expecting(
            lambda request: (
                last_user_content(request)
                == [
                    {"type": "text", "text": "Summarize @library:note://readme please"},
                    {"type": "text", "text": "Attached note://readme (text/plain):\nRead me first."},
                ]
            )
        ),
        # A prompt ending with the assistant's message waits for the person's reply.
        Turn.text("Hello again.").expecting(
            lambda request: (
                [m["content"] for m in request.messages[-3:]] == ["Hello!", "Hi, how can I help?", "Hi"]
            )
        ),
    ]
    with ScriptedModelServer(script) as model:
        config = config_with_library(tmp_path, model, stdio_server("library"))
        lines = [
            "/prompts",
            "/prompt review code='x = 1' language=rust",
            "Summarize @library:note://readme please",
            "Look at @library:nothing://here",
            "/prompt review language",
            "/prompt nope",
            "/prompt greet",
            "Hi",
            "/exit",
        ]
        done = toolbridge(tmp_path, "chat", "--config", str(config), stdin="\n".join(lines) + "\n")
    assert done.returncode == 0, done.stderr
    assert "review code=… [language=…] (library)  Review a piece of code." in done.stdout
    assert "Reviewed." in done.stdout
    assert "Attached note://readme (library)" in done.stdout
    assert "It says to read it first." in done.stdout
    assert "cannot attach @library:nothing://here" in done.stderr
    assert "The message was not sent" in done.stderr
    assert "'language' is not key=value" in done.stderr
    assert "No server has a prompt named 'nope'" in done.stderr
    assert "assistant (prompt): Hi, how can I help?" in done.stdout
    assert "Hello again." in done.stdout
    # The stored chat has the prompt's messages and the attachment.
    history = toolbridge(tmp_path, "history", "show", "1", "--json")
    assert history.returncode == 0, history.stderr
    messages = json.loads(history.stdout)["messages"]
    assert messages[2]["content"] == "Summarize @library:note://readme please"
    assert messages[2]["attachments"][0]["uri"] == "note://readme"
    assert [m["content"] for m in messages[4:]] == ["Hello!", "Hi, how can I help?", "Hi", "Hello again."]


class Terminal:
    """A process on a pseudo-terminal: type into it and wait for what it shows."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.fd, child = pty.openpty()
        self.process = subprocess.Popen(
            command, stdin=child, stdout=child, stderr=child, env=env, cwd=cwd, start_new_session=True
        )
        os.close(child)
        self.seen = ""

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait_for(self, text: str, *, times: int = 1) -> None:
        """Wait until `text` has been shown `times` times (30 s at most)."""
        deadline = time.monotonic() + 30
        while self.seen.count(text) < times:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.fd], [], [], max(left, 0))
            assert ready, f"{text!r} never appeared {times} times; the terminal shows:\n{self.seen}"
            try:
                self.seen += os.read(self.fd, 4096).decode(errors="replace")
            except OSError:  # the process ended
                raise AssertionError(f"the chat ended before {text!r}; it showed:\n{self.seen}") from None

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        os.close(self.fd)


def test_tab_completes_servers_uris_template_values_and_prompts(
    tmp_path: Path, stdio_server: Callable[..., ServerConfig]
) -> None:
    script = [
        Turn.text("A desert planet.").expecting(
            lambda request: (
                last_user_content(request)[1]
                == {"type": "text", "text": "Attached shelf://dune (text/plain):\nThe book dune."}
            )
        ),
        Turn.text("Rust reviewed.").expecting(
            lambda request: last_user_content(request) == "Review this rust code:\nx"
        ),
    ]
    with ScriptedModelServer(script) as model:
        config = config_with_library(tmp_path, model, stdio_server("library"))
        env = {**environment(tmp_path), "TERM": "xterm", "INPUTRC": "/dev/null"}
        terminal = Terminal([*TOOLBRIDGE, "chat", "--config", str(config)], env, tmp_path)
        try:
            terminal.wait_for("you>")
            terminal.type("About @lib\t")
            terminal.wait_for("@library:")
            terminal.type("shelf://d\t")  # a template: the value comes from the server's completion
            terminal.wait_for("@library:shelf://dune")
            terminal.type("\r")
            terminal.wait_for("A desert planet.")
            terminal.wait_for("you>", times=2)
            terminal.type("/prompt rev\t")
            terminal.wait_for("/prompt review")
            terminal.type(" code=x language=r\t")
            terminal.wait_for("language=rust")
            terminal.type("\r")
            terminal.wait_for("Rust reviewed.")
            terminal.wait_for("you>", times=3)
            terminal.type("/exit\r")
            assert terminal.process.wait(timeout=30) == 0
        finally:
            terminal.close()
