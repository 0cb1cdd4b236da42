"""A tool call the server runs as a task, in the real CLI on a pseudo-terminal: the task's status
shows as the call's progress, Ctrl-C cancels the task at the server, and a form the task asks for is
asked on the terminal."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli.cli_helpers import TOOLBRIDGE, StdioServer, environment, stdio_entry, toolbridge, write_config
from cli.terminal import Terminal

pytestmark = pytest.mark.slow


def test_a_tasks_status_shows_as_progress_and_ctrl_c_cancels_it_at_the_server(
    tmp_path: Path, http_server: Callable[..., Any]
) -> None:
    server = http_server("tasks_server", "streamable-http")
    config = write_config(tmp_path, {"mcpServers": {"tasks": {"url": server.url}}})
    command = [*TOOLBRIDGE, "call", "hold", '{"tag": "cli"}', "--config", str(config)]
    with Terminal(command, env=environment(tmp_path), cwd=tmp_path) as terminal:
        terminal.expect("… hold holding cli")
        os.killpg(terminal.process.pid, signal.SIGINT)
        terminal.wait()

    asked = toolbridge(tmp_path, "call", "was_cancelled", '{"tag": "cli"}', "--config", str(config))
    assert asked.stdout.strip() == "true", asked.stderr


def test_a_form_asked_inside_a_task_is_asked_on_the_terminal(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    config = write_config(tmp_path, {"mcpServers": {"tasks": stdio_entry(stdio_server("tasks_server"))}})
    command = [*TOOLBRIDGE, "call", "confirm_delete", '{"filename": "a.txt"}', "--config", str(config)]
    with Terminal(command, env=environment(tmp_path), cwd=tmp_path) as terminal:
        terminal.expect("Server tasks asks: Delete a.txt?")
        terminal.type("")
        terminal.expect("Confirm")
        terminal.type("y")
        terminal.expect("deleted a.txt")
        assert terminal.wait() == 0
