"""Servers asking in the real CLI, on a pseudo-terminal: sampling approved inline, a form filled in
(defaults, a wrong answer corrected), a URL opened after asking, roots shown and changed; and declined
where nobody can be asked (--json)."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from cli.cli_helpers import TOOLBRIDGE, StdioServer, environment, stdio_entry, toolbridge, write_config
from cli.terminal import Terminal
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow


def config_for(tmp_path: Path, model: ScriptedModelServer, server: StdioServer, **extra: Any) -> Path:
    return write_config(
        tmp_path,
        {
            "mcpServers": {"asker": stdio_entry(server("asks_client"), **extra)},
            "models": {"m": {"provider": "openai-compatible", "base_url": model.base_url, "model": "m"}},
        },
    )


def tool_result(request: Any) -> str:
    assert request.last_message["role"] == "tool"
    return str(request.last_message["content"])


def test_sampling_is_approved_inline_and_answered_by_the_agents_model(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("summarize", {"text": "a long text"})),
        Turn.text("short.").expecting(lambda r: r.messages[0]["content"] == "Summarize in one line."),
        Turn.text("Done.").expecting(lambda r: tool_result(r) == "short."),
    ]
    with ScriptedModelServer(script) as model:
        config = config_for(tmp_path, model, stdio_server)
        command = [*TOOLBRIDGE, "ask", "--config", str(config), "Summarize it"]
        with Terminal(command, env=environment(tmp_path), cwd=tmp_path) as terminal:
            asked = terminal.expect("Allow it?")
            terminal.type("y")
            terminal.expect("Done.")
            assert terminal.wait() == 0
    assert "Server asker asks the model m for a completion (up to 64 tokens)" in asked
    assert "system: Summarize in one line." in asked
    assert "user: a long text" in asked


def test_a_form_is_filled_in_with_defaults_and_roots_are_shown_and_changed(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    answered = {
        "action": "accept",
        "content": {"city": "Oslo", "guests": 2, "meal": "lunch", "vegetarian": True},
    }
    (tmp_path / "elsewhere").mkdir()
    script = [
        Turn.tool_calls(ToolCallSpec("ask_preferences", {})),
        Turn.text("Booked.").expecting(lambda r: json.loads(tool_result(r)) == answered),
        Turn.tool_calls(ToolCallSpec("await_roots_change", {})),
        Turn.text("Seen.").expecting(lambda r: tool_result(r) == (tmp_path / "elsewhere").as_uri()),
    ]
    with ScriptedModelServer(script) as model:
        config = config_for(tmp_path, model, stdio_server)
        command = [*TOOLBRIDGE, "chat", "--config", str(config)]
        with Terminal(command, env=environment(tmp_path), cwd=tmp_path) as terminal:
            terminal.expect("> ")
            terminal.type("Book a table")
            terminal.expect("Answer it? [y = yes / n = decline / c = cancel] (y): ")
            terminal.type("")
            terminal.expect("City (text, required): ")
            terminal.type("")  # required: asked again
            terminal.expect("City is required")
            terminal.expect("City (text, required): ")
            terminal.type("Oslo")
            terminal.expect("Guests (a whole number 1..10) [2]: ")
            terminal.type("")
            terminal.expect("Vegetarian (y/n) [n]: ")
            terminal.type("y")
            terminal.expect("Meal (1) lunch, 2) dinner) [dinner]: ")
            terminal.type("1")
            terminal.expect("Booked.")
            terminal.expect("> ")
            terminal.type("/roots")
            terminal.expect(f"roots: {tmp_path.as_uri()}")  # the folder toolbridge runs in
            terminal.expect("> ")
            terminal.type("/roots elsewhere")
            terminal.expect(f"roots: {(tmp_path / 'elsewhere').as_uri()}")
            terminal.expect("> ")
            terminal.type("Did they change?")
            terminal.expect("Seen.")
            terminal.expect("> ")
            terminal.type("/exit")
            assert terminal.wait() == 0


def test_a_url_is_opened_after_asking_and_its_completion_shown(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!{sys.executable}\nimport sys\nopen({str(opened)!r}, 'w').write(sys.argv[1])\n")
    browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
    script = [
        Turn.tool_calls(ToolCallSpec("ask_to_open", {"url": "https://example.com/login"})),
        Turn.text("Signed in.").expecting(lambda r: tool_result(r) == "accept"),
    ]
    with ScriptedModelServer(script) as model:
        config = config_for(tmp_path, model, stdio_server)
        env = {**environment(tmp_path), "BROWSER": f"{browser} %s"}
        command = [*TOOLBRIDGE, "ask", "--config", str(config), "Sign me in"]
        with Terminal(command, env=env, cwd=tmp_path) as terminal:
            asked = terminal.expect("Open it in your browser?")
            terminal.type("y")
            terminal.expect("Signed in.")
            assert terminal.wait() == 0
    # Shown when the notification is handled: before or after the answer.
    assert "server 'asker': the step in the browser is complete" in terminal.shown
    assert "Server asker asks you to open a page: Sign in to continue." in asked
    assert "https://example.com/login" in asked
    assert opened.read_text() == "https://example.com/login"


def test_with_json_a_form_is_declined_with_the_reason_even_with_yes(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("ask_contact", {})),
        Turn.text("No answer.").expecting(
            lambda r: "Elicitation declined: toolbridge runs with --json" in tool_result(r)
        ),
    ]
    with ScriptedModelServer(script) as model:
        config = config_for(tmp_path, model, stdio_server)
        done = toolbridge(tmp_path, "ask", "--json", "--yes", "--config", str(config), "Who?")
    assert done.returncode == 0, done.stderr
    assert "No answer." in done.stdout


def test_yes_approves_sampling_without_a_terminal(tmp_path: Path, stdio_server: StdioServer) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("summarize", {"text": "a long text"})),
        Turn.text("short."),
        Turn.text("Done.").expecting(lambda r: tool_result(r) == "short."),
    ]
    with ScriptedModelServer(script) as model:
        config = config_for(tmp_path, model, stdio_server)
        done = toolbridge(tmp_path, "ask", "--yes", "--config", str(config), "Summarize it")
    assert done.returncode == 0, done.stderr
    assert "Done." in done.stdout


def test_without_a_terminal_or_yes_sampling_is_declined_with_the_reason(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("summarize", {"text": "a long text"})),
        Turn.text("No.").expecting(
            lambda r: "Sampling declined: stdin is not a terminal to ask on (pass --yes" in tool_result(r)
        ),
    ]
    with ScriptedModelServer(script) as model:
        config = config_for(tmp_path, model, stdio_server)
        done = toolbridge(tmp_path, "ask", "--config", str(config), "Summarize it")
    assert done.returncode == 0, done.stderr


def test_call_asks_a_servers_form_on_the_terminal_and_cancel_is_possible(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    config = write_config(tmp_path, {"mcpServers": {"asker": stdio_entry(stdio_server("asks_client"))}})
    command = [*TOOLBRIDGE, "call", "ask_contact", "--config", str(config)]
    with Terminal(command, env=environment(tmp_path), cwd=tmp_path) as terminal:
        terminal.expect("Server asker asks: Who should we contact?")
        terminal.type("")
        terminal.expect("Name (text, required): ")
        terminal.type("Ada")
        terminal.expect("Age (a whole number) [30]: ")
        terminal.type("")
        terminal.expect("accepted Ada (30)")
        assert terminal.wait() == 0
    with Terminal(command, env=environment(tmp_path), cwd=tmp_path) as terminal:
        terminal.expect("Answer it?")
        terminal.type("c")
        terminal.expect("cancel")
        assert terminal.wait() == 0


def test_a_prompt_and_an_attachment_whose_server_asks_first_are_asked_on_the_terminal(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    """On 2026-07-28 a prompt or a read may answer `input_required` with no tool call in flight: chat asks
    it like any server question, and sends the prompt or attaches the resource with the answer."""
    script = [
        Turn.text("Hello Ada!").expecting(lambda r: r.last_message["content"] == "Write a greeting for Ada."),
        Turn.text("A letter.").expecting(
            lambda r: r.last_message["content"][-1]["text"].endswith("Dear Grace, about tea.")
        ),
    ]
    with ScriptedModelServer(script) as model:
        config = write_config(
            tmp_path,
            {
                "mcpServers": {"modern": stdio_entry(stdio_server("modern"))},
                "models": {"m": {"provider": "openai-compatible", "base_url": model.base_url, "model": "m"}},
                "agents": {"default": {"tool_calling": False}},
            },
        )
        command = [*TOOLBRIDGE, "chat", "--config", str(config)]
        with Terminal(command, env=environment(tmp_path), cwd=tmp_path) as terminal:
            terminal.expect("> ")
            terminal.type("/prompt greeting")
            asked = terminal.expect("Answer it? [y = yes / n = decline / c = cancel] (y): ")
            terminal.type("")
            terminal.expect("name (text, required): ")
            terminal.type("Ada")
            terminal.expect("Hello Ada!")
            terminal.expect("> ")
            terminal.type("What is @modern:letter://tea about?")
            terminal.expect("Answer it? [y = yes / n = decline / c = cancel] (y): ")
            terminal.type("")
            terminal.expect("name (text, required): ")
            terminal.type("Grace")
            terminal.expect("A letter.")
            terminal.expect("> ")
            terminal.type("/exit")
            assert terminal.wait() == 0
    assert "Server modern asks: Who is this for?" in asked
