"""What a new user expects of a command line: --version, -h, `models`, warnings about servers that
failed, errors on stderr, a busy port, and the same options everywhere (what `ask` takes in:
test_ask_input.py).

Commands run in this process (`cli_helpers.toolbridge`), or as real processes where the process is the
point (the entry point, Ctrl-C), with their own config and database under tmp_path.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click
import pytest
import typer

from cli.cli_helpers import (
    TOOLBRIDGE,
    StdioServer,
    environment,
    stdio_entry,
    toolbridge,
    toolbridge_process,
    write_config,
)
from cli.terminal import Terminal
from toolbridge.cli.commands import app
from toolbridge.config.model import ServerConfig
from toolbridge.testing import ScriptedModelServer, Turn

# -- the habits of every command line ----------------------------------------------------------------


@pytest.mark.slow
def test_version_and_short_help(tmp_path: Path) -> None:
    """The installed command itself (`python -m toolbridge`, loading only the command it runs)."""
    version = toolbridge_process(tmp_path, "--version")
    assert version.returncode == 0
    assert version.stdout.strip() == f"toolbridge {importlib.metadata.version('toolbridge')}"
    for args in (["-h"], ["ask", "-h"], ["agents", "create", "-h"]):
        shown = toolbridge_process(tmp_path, *args)
        assert shown.returncode == 0, (args, shown.stderr)
        assert "Usage:" in shown.stdout


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found: list[tuple[tuple[str, ...], click.Command]] = []
    for name, command in group.commands.items():
        found.append(((*path, name), command))
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
    return found


def test_every_command_takes_config_and_verbose() -> None:
    commands = _commands(typer.main.get_command(app))  # type: ignore[arg-type]
    assert {"ask", "chat", "models", "stats", "parse", "serve"} <= {path[0] for path, _ in commands}
    missing = [
        (" ".join(path), option)
        for path, command in commands
        for option in ("--config", "--verbose")
        if not any(option in parameter.opts for parameter in command.params)
    ]
    assert missing == []


# -- ask ---------------------------------------------------------------------------------------------------


def test_short_options_mean_one_thing_everywhere_as_in_llm() -> None:
    """-s is --system and -c is --continue wherever they exist; --config and --server stay long."""
    meanings: dict[str, set[str]] = {}
    for _, command in _commands(typer.main.get_command(app)):  # type: ignore[arg-type]
        for parameter in command.params:
            longs = tuple(option for option in parameter.opts if option.startswith("--"))
            for short in (option for option in parameter.opts if not option.startswith("--")):
                meanings.setdefault(short, set()).add(longs[0] if longs else short)
    assert meanings["-s"] == {"--system"}
    assert meanings["-c"] <= {"--continue", "--resume"}  # chat's --resume is also --continue
    assert {"--config", "--server"}.isdisjoint(meanings.get("-c", set()) | meanings["-s"])


@pytest.mark.slow
def test_ask_warns_about_a_server_that_failed_and_answers_anyway(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    config = write_config(
        tmp_path,
        {
            "mcpServers": {
                "basic": stdio_entry(stdio_server("basic")),
                "crashy": stdio_entry(stdio_server("exits_at_start")),
            }
        },
    )
    done = toolbridge(tmp_path, "ask", "--model", "demo", "--config", str(config), "What is 15 + 27?")
    assert done.returncode == 0, done.stderr
    assert "[demo model] 15 + 27 = 42" in done.stdout
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1
    assert "MCP server 'crashy' is unavailable" in warnings[0]
    assert 'its stderr ends: "giving up"' in warnings[0]  # the reason, not only the name
    assert "warning" not in done.stdout


@pytest.mark.slow
def test_ask_answers_time_questions_with_a_time_server_configured(
    tmp_path: Path, published_server: Callable[..., ServerConfig]
) -> None:
    time_server = published_server("mcp-server-time")
    config = write_config(tmp_path, {"mcpServers": {"time": stdio_entry(time_server)}})
    done = toolbridge(
        tmp_path, "ask", "--model", "demo", "--config", str(config), "What time is it in Tokyo?"
    )
    assert done.returncode == 0, done.stderr
    assert '✓ time__get_current_time {"timezone": "Asia/Tokyo"}' in done.stderr
    assert '"timezone": "Asia/Tokyo"' in done.stdout.split("[demo model] `time__get_current_time` says", 1)[1]


def children_of(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


@pytest.mark.slow
def test_ctrl_c_while_servers_connect_exits_at_once(
    tmp_path: Path, stdio_server: StdioServer, wait_until_gone: Callable[..., bool]
) -> None:
    # `silent` never completes the handshake: without Ctrl-C, ask would wait out its connect_timeout.
    config = write_config(
        tmp_path, {"mcpServers": {"silent": stdio_entry(stdio_server("silent"), connect_timeout=600)}}
    )
    process = subprocess.Popen(
        [*TOOLBRIDGE, "ask", "--model", "demo", "--config", str(config), "What is 1 + 1?"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(tmp_path),
        cwd=tmp_path,
        start_new_session=True,  # the SIGINT reaches toolbridge only: it must stop the server itself
    )
    try:
        deadline = time.monotonic() + 60
        servers: list[int] = []
        while not servers:  # wait for the server to be spawned: toolbridge is now connecting
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the MCP server was never started"
            servers = children_of(process.pid)
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
        _, stderr = process.communicate()
        assert "interrupted" in stderr
        assert "Traceback" not in stderr
        for pid in servers:
            assert wait_until_gone(pid), f"server process {pid} outlived toolbridge"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.slow
def test_call_on_one_server_does_not_wait_for_another(tmp_path: Path, stdio_server: StdioServer) -> None:
    config = write_config(
        tmp_path,
        {
            "mcpServers": {
                "basic": stdio_entry(stdio_server("basic")),
                "silent": stdio_entry(stdio_server("silent"), connect_timeout=600),
            }
        },
    )
    done = toolbridge(
        tmp_path, "call", "add", '{"a": 2, "b": 40}', "--server", "basic", "--config", str(config)
    )
    assert (done.returncode, done.stdout.strip()) == (0, "42"), done.stderr


# -- models ------------------------------------------------------------------------------------------------


def test_models_lists_the_configured_models_and_the_default(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        {
            "models": {
                "fast": {"provider": "deepseek", "model": "deepseek-chat", "api_key": "sk-secret"},
                "local": {"provider": "ollama", "model": "qwen3:8b", "tool_mode": "prompt"},
            },
            "default_model": "local",
        },
    )
    listed = toolbridge(tmp_path, "models", "--json", "--config", str(config))
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert rows["fast"] == {
        "name": "fast",
        "provider": "deepseek",
        "model": "deepseek-chat",
        "base_url": None,
        "tool_mode": "auto",
        "default": False,
    }
    assert (rows["local"]["tool_mode"], rows["local"]["default"]) == ("prompt", True)
    table = toolbridge(tmp_path, "models", "--config", str(config))
    assert table.returncode == 0
    assert "deepseek-chat" in table.stdout
    assert "sk-secret" not in table.stdout + listed.stdout
    assert "demo" in table.stdout  # and what works without configuring anything


def test_models_without_a_config_says_how_to_add_one(tmp_path: Path) -> None:
    done = toolbridge(tmp_path, "models")
    assert done.returncode == 0, done.stderr
    assert "No models configured" in done.stdout
    assert toolbridge(tmp_path, "models", "--json").stdout.strip() == "[]"


# -- serve -------------------------------------------------------------------------------------------------


def test_a_real_claude_desktop_config_is_read_with_a_note_on_stderr(tmp_path: Path) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text('{"globalShortcut": "", "mcpServers": {}, "models": {"m": {"provider": "demo"}}}')
    done = toolbridge(tmp_path, "models", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "m" in done.stdout
    assert done.stderr == f"note: {config}: Claude Desktop's settings ignored: globalShortcut\n"


def test_a_config_nested_too_deep_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    config = tmp_path / "toolbridge.json"
    config.write_text('{"models": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    done = toolbridge(tmp_path, "models", "--config", str(config))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert done.stderr.strip() == (
        f"error: {config}: nested too deep at line 1, column 111; a config file nests objects and lists"
        " at most 100 levels deep; check that this is the config file you meant (a generated or damaged"
        " file?)"
    )


@pytest.mark.slow
def test_serve_on_a_busy_port_fails_with_a_hint_before_saying_serving(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = toolbridge(tmp_path, "serve", "--port", str(port))
    assert done.returncode == 1
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert f"--port {port + 1}" in done.stderr
    assert "serving" not in done.stderr + done.stdout


# -- chat --------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_chat_commands_help_tools_model_clear_and_exit(tmp_path: Path) -> None:
    db = str(tmp_path / "chats.db")
    with ScriptedModelServer([Turn.text("Hello from the scripted model.")]) as model:
        config = write_config(
            tmp_path,
            {
                "models": {
                    "scripted": {"provider": "openai-compatible", "base_url": model.base_url, "model": "s"}
                }
            },
        )
        lines = [
            "/help",
            "/tools",
            "Hi",
            "/model no-such-model",
            "/model demo",
            "/model",
            "/clear",
            "What is 2 + 2?",
            "/bogus",
            "/exit",
            "This is never asked.",
        ]
        done = toolbridge(
            tmp_path, "chat", "--config", str(config), "--db", db, stdin="\n".join(lines) + "\n"
        )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert all(command in out for command in ("/tools", "/model [NAME]", "/clear", "/exit"))  # /help
    assert "calculate (native)" in out  # /tools
    assert "Hello from the scripted model." in out
    assert "no-such-model" in done.stderr  # /model with an unknown name: an error, and the chat goes on
    assert "model: demo" in out
    assert "[demo model] 2 + 2 = 4" in out  # answered by the model switched to
    assert "unknown command '/bogus'; /help lists the commands." in done.stderr
    assert "never asked" not in out
    # /clear started a second stored chat; the hint to resume it names the same database and config.
    chats = json.loads(toolbridge(tmp_path, "history", "--json", "--db", db).stdout)
    assert [chat["title"] for chat in chats] == ["What is 2 + 2?", "Hi"]
    assert f"Saved as chat 2: toolbridge chat --resume 2 --db {db} --config {config}" in out


@pytest.mark.slow
def test_a_question_about_a_path_is_not_taken_for_a_chat_command(tmp_path: Path) -> None:
    done = toolbridge(tmp_path, "chat", "--model", "demo", stdin="/etc/hosts: what is 1 + 1?\n")
    assert done.returncode == 0, done.stderr
    assert "unknown command" not in done.stderr
    assert "[demo model] 1 + 1 = 2" in done.stdout


@pytest.mark.slow
def test_chat_warns_about_a_server_that_failed_once_at_the_start(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    config = write_config(tmp_path, {"mcpServers": {"crashy": stdio_entry(stdio_server("exits_at_start"))}})
    done = toolbridge(
        tmp_path, "chat", "--model", "demo", "--config", str(config), stdin="What is 1 + 1?\nWhat is 2 + 2?\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("MCP server 'crashy' is unavailable") == 1
    assert "[demo model] 2 + 2 = 4" in done.stdout


# -- stats -------------------------------------------------------------------------------------------------

LONG_TOOL_NAMES = ("apply_conditional_formatting", "native__get_current_time")


def stats_table(tmp_path: Path, columns: int) -> str:
    from datetime import UTC, datetime

    from toolbridge.store import Store, ToolCallLogEntry

    db = f"sqlite:///{tmp_path / 'stats.db'}"
    with Store(db) as store:
        for tool in LONG_TOOL_NAMES:
            store.log_tool_call(
                ToolCallLogEntry(
                    tool=tool,
                    server="excel",
                    call_id=f"call_{tool}",
                    argument_hash="-",
                    started_at=datetime.now(UTC),
                    duration=0.25,
                    status="error",
                    error="Server 'excel' could not be started: the command 'uvx' was not found on PATH.",
                )
            )
    env = {**environment(tmp_path), "COLUMNS": str(columns)}
    done = subprocess.run(
        [*TOOLBRIDGE, "stats", "--db", db], capture_output=True, text=True, env=env, timeout=60, check=True
    )
    return done.stdout


@pytest.mark.parametrize("columns", [60, 200])
def test_stats_keeps_tool_names_whole_on_any_width(tmp_path: Path, columns: int) -> None:
    shown = stats_table(tmp_path, columns)
    for name in LONG_TOOL_NAMES:
        assert name in shown
    # A table, when there is one, fits the terminal (its rows cannot be re-wrapped by the terminal).
    assert all(len(line) <= columns for line in shown.splitlines() if "│" in line)
    assert "250 ms" in shown
    assert "could not be started" in shown


@pytest.mark.slow
def test_a_finished_call_keeps_its_arguments_and_a_failed_one_reads_as_what_the_model_was_told(
    tmp_path: Path,
) -> None:
    done = toolbridge(tmp_path, "ask", "--model", "demo", "What is 15 + 27?")
    assert done.returncode == 0, done.stderr
    assert '✓ calculate {"expression": "15 + 27"}' in done.stderr
    failed = toolbridge(tmp_path, "ask", "--model", "demo", "What is 1 / 0?")
    assert failed.returncode == 0, failed.stderr
    assert '✗ calculate {"expression": "1 / 0"}' in failed.stderr
    assert "the tool failed; the model was told: " in failed.stderr
    assert "error:" not in failed.stderr.lower()  # nothing the person did wrong


@pytest.mark.slow
def test_a_run_that_ends_without_an_answer_says_why_on_stderr(tmp_path: Path) -> None:
    with ScriptedModelServer([Turn.error(401, "Incorrect API key provided.")]) as model:
        config = write_config(
            tmp_path,
            {"models": {"m": {"provider": "openai-compatible", "base_url": model.base_url, "model": "m"}}},
        )
        done = toolbridge(tmp_path, "ask", "--config", str(config), "Hello")
    assert done.returncode == 1
    assert "stopped:" in done.stderr
    assert "Incorrect API key provided." in done.stderr
    assert "stopped" not in done.stdout


def test_the_command_line_imports_only_what_the_command_it_runs_needs() -> None:
    probe = (
        "import sys\n"
        "sys.argv = ['toolbridge', '--version']\n"
        "import toolbridge.cli\n"
        "heavy = ['fastapi', 'sqlalchemy', 'openai', 'anthropic', 'uvicorn', 'mcp', 'prometheus_client']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "try:\n"
        "    toolbridge.cli.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "print(sorted(m for m in sys.modules if m.startswith('toolbridge.cli.') and m != 'toolbridge.cli.app'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    imported, after_version, commands, *_ = [
        line for line in done.stdout.splitlines() if line.startswith("[")
    ]
    assert imported == after_version == "[]"
    assert commands == "[]", "--version loads no command"


@pytest.mark.slow
def test_chat_starts_its_servers_once_not_per_question(tmp_path: Path) -> None:
    started = tmp_path / "started.log"
    basic = Path(__file__).resolve().parents[1] / "servers" / "basic.py"
    launch = f"echo started >> {shlex.quote(str(started))}; exec {shlex.quote(sys.executable)} {shlex.quote(str(basic))}"
    config = write_config(tmp_path, {"mcpServers": {"basic": {"command": "sh", "args": ["-c", launch]}}})
    command = [
        *TOOLBRIDGE,
        "chat",
        "--model",
        "demo",
        "--config",
        str(config),
        "--db",
        str(tmp_path / "t.db"),
    ]
    with Terminal(command, env={**os.environ, "NO_COLOR": "1"}, cwd=tmp_path) as terminal:
        for question in ("What is 15 + 27?", "What is 2 + 3?"):
            terminal.expect("you>")
            terminal.type(question)
        terminal.expect("5")
        terminal.expect("you>")
        terminal.type("/exit")
        assert terminal.wait() == 0
    assert started.read_text().splitlines() == ["started"]
