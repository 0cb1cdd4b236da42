"""`toolbridge servers`, `tools` and `call` against real MCP servers (over stdio): in this process
(`in_process`), and as real processes where the process is the point (Ctrl-C, the terminal)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli.cli_helpers import TOOLBRIDGE, in_process
from cli.terminal import Terminal
from toolbridge.config.model import ServerConfig

pytestmark = pytest.mark.slow

StdioServer = Callable[..., ServerConfig]


def write_config(path: Path, servers: dict[str, dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def stdio_entry(server: ServerConfig) -> dict[str, Any]:
    return {"command": server.command, "args": server.args}


@pytest.fixture(autouse=True)
def own_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`call` logs to the store: every command here uses the test's own database, never the user's."""
    path = tmp_path / "calls.db"
    monkeypatch.setenv("TOOLBRIDGE_DB", str(path))
    return path


def logged_stats() -> dict[tuple[str, str], dict[str, Any]]:
    done = toolbridge("stats", "--json")
    assert done.returncode == 0, done.stderr
    return {(row["tool"], row["server"]): row for row in json.loads(done.stdout)}


@pytest.fixture
def config_file(tmp_path: Path, stdio_server: StdioServer) -> Path:
    return write_config(
        tmp_path / "toolbridge.json",
        {
            "basic": stdio_entry(stdio_server("basic")),
            "broken": {"command": "toolbridge-no-such-command"},
            "off": {**stdio_entry(stdio_server("shadow")), "enabled": False},
        },
    )


def toolbridge(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return in_process(*args, env={"TOOLBRIDGE_CONFIG": None}, cwd=cwd)


def test_servers_reports_state_tool_count_and_last_error(config_file: Path) -> None:
    done = toolbridge("servers", "--config", str(config_file), "--json")
    assert done.returncode == 1  # a server failed to start: scripts checking the setup must see it
    assert "1 of 3 servers failed to start: broken." in done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert rows["basic"]["state"] == "connected"
    assert rows["basic"]["transport"] == "stdio"
    assert rows["basic"]["tool_count"] >= 10
    assert rows["basic"]["last_error"] is None
    assert rows["broken"]["state"] == "failed"
    assert "toolbridge-no-such-command" in rows["broken"]["last_error"]
    assert rows["off"]["state"] == "disabled"
    assert rows["off"]["tool_count"] is None

    # Readable at 80 columns: a line per server, its command and its error each whole on their own line.
    shown = in_process(
        "servers", "--config", str(config_file), env={"TOOLBRIDGE_CONFIG": None, "COLUMNS": "80"}
    )
    assert shown.returncode == 1
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("basic  connected  stdio  ")
    assert f"  {rows['basic']['target']}" in lines
    assert f"  last error: {rows['broken']['last_error']}" in lines
    assert "broken  failed  stdio" in shown.stdout


def test_servers_exits_zero_when_every_enabled_server_started(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    config = write_config(
        tmp_path / "ok.json",
        {"basic": stdio_entry(stdio_server("basic")), "off": {"command": "nope", "enabled": False}},
    )
    done = toolbridge("servers", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_tools_json_gives_full_definitions(config_file: Path) -> None:
    done = toolbridge("tools", "--config", str(config_file), "--json")
    assert done.returncode == 0, done.stderr
    specs = {spec["name"]: spec for spec in json.loads(done.stdout)}
    assert specs["add"]["source"] == "basic"
    assert specs["add"]["input_schema"]["required"] == ["a", "b"]
    assert specs["add"]["annotations"]["read_only_hint"] is True
    assert specs["calculate"]["source"] == "native"
    assert "broken" in done.stderr  # the unavailable server is reported, not hidden


def test_tools_for_one_server_and_human_output(config_file: Path) -> None:
    done = toolbridge("tools", "--config", str(config_file), "--server", "basic")
    assert done.returncode == 0, done.stderr
    assert "## add" in done.stdout
    assert "a (integer, required)" in done.stdout
    assert "calculate" not in done.stdout
    unknown = toolbridge("tools", "--config", str(config_file), "--server", "nope")
    assert unknown.returncode == 1
    assert "no server named 'nope'" in unknown.stderr


def test_call_prints_the_result(config_file: Path) -> None:
    done = toolbridge("call", "add", '{"a": 2, "b": 40}', "--config", str(config_file))
    assert (done.returncode, done.stdout.strip()) == (0, "42"), done.stderr
    native = toolbridge("call", "calculate", '{"expression": "15 + 27"}', "--config", str(config_file))
    assert (native.returncode, native.stdout.strip()) == (0, "42"), native.stderr


def test_call_json_output(config_file: Path) -> None:
    done = toolbridge(
        "call", "echo", '{"text": "hi"}', "--server", "basic", "--json", "--config", str(config_file)
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert result["server"] == "basic"
    assert result["is_error"] is False


def test_call_server_option_means_that_server_only(config_file: Path) -> None:
    """`--server` with the name `tools` shows (qualified), and `--server native` for built-in tools only."""
    qualified = toolbridge(
        "call", "basic__add", '{"a": 2, "b": 40}', "--server", "basic", "--config", str(config_file)
    )
    assert (qualified.returncode, qualified.stdout.strip()) == (0, "42"), qualified.stderr
    native = toolbridge(
        "call", "calculate", '{"expression": "1 + 1"}', "--server", "native", "--config", str(config_file)
    )
    assert (native.returncode, native.stdout.strip()) == (0, "2"), native.stderr
    not_native = toolbridge(
        "call", "add", '{"a": 2, "b": 40}', "--server", "native", "--config", str(config_file)
    )
    assert not_native.returncode == 1
    assert not_native.stdout == ""
    conflicting = toolbridge("call", "basic__add", "{}", "--server", "native", "--config", str(config_file))
    assert conflicting.returncode == 1
    assert "names server 'basic', but --server says 'native'" in conflicting.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "{}"], "Unknown tool 'nope'"),
        (["add", '{"a": 1}'], "'b' is a required property"),
        (["add", "{not json"], "ARGUMENTS is not valid JSON"),
        (["add", "[1, 2]"], "ARGUMENTS must be a JSON object"),
        (["fail", '{"message": "boom"}'], "boom"),
        (["sleep", '{"ms": 5000}', "--timeout", "0.3"], "did not answer within 0.3 s"),
    ],
)
def test_call_failures_exit_non_zero_with_a_clear_message(
    config_file: Path, args: list[str], message: str
) -> None:
    done = toolbridge("call", *args, "--config", str(config_file))
    assert done.returncode == 1
    assert message in done.stderr
    assert done.stdout == ""


def test_calls_are_logged_for_stats_with_bad_arguments_against_their_tool(config_file: Path) -> None:
    assert toolbridge("call", "add", '{"a": 2, "b": 40}', "--config", str(config_file)).returncode == 0
    assert toolbridge("call", "add", '{"a": 1}', "--config", str(config_file)).returncode == 1
    assert toolbridge("call", "nope", "{}", "--config", str(config_file)).returncode == 1

    stats = logged_stats()
    add = stats["add", "basic"]
    assert (add["calls"], add["succeeded"], add["failed"], add["success_rate"]) == (2, 1, 1, 0.5)
    assert "'b' is a required property" in add["last_error"]
    assert stats["nope", ""]["failed"] == 1


def test_a_broken_config_names_the_file_and_the_problem(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {"x": {"command": "a", "args": "-y"}}}')
    done = toolbridge("servers", "--config", str(bad))
    assert done.returncode == 1
    assert str(bad) in done.stderr
    assert "'x'" in done.stderr
    assert "args" in done.stderr


def children_of(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found += [int(child) for child in text]
    return found


def test_ctrl_c_stops_the_call_and_leaves_no_server_process(
    config_file: Path, wait_until_gone: Callable[..., bool]
) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    # A session of its own, so the SIGINT reaches toolbridge only: the server must be stopped by us.
    process = subprocess.Popen(
        [*TOOLBRIDGE, "call", "sleep", '{"ms": 60000}', "--config", str(config_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        servers: list[int] = []
        while not servers:  # wait for the stdio server to be spawned
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "the MCP server was never started"
            servers = children_of(process.pid)
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 130
        assert process.stderr is not None
        assert "interrupted" in process.stderr.read().decode()
        for pid in servers:
            assert wait_until_gone(pid), f"server process {pid} outlived toolbridge"
        # Against its tool's server once it was resolved; Ctrl-C may come while the server still starts.
        (sleep,) = [row for (tool, _), row in logged_stats().items() if tool == "sleep"]
        assert (sleep["calls"], sleep["cancelled"], sleep["failed"], sleep["success_rate"]) == (1, 1, 0, None)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("rule", ["delete_file", "h__delete_file", "h:delete_file"])
def test_call_honours_a_server_deny_rule_when_a_collision_renames_the_tool(
    tmp_path: Path, stdio_server: StdioServer, rule: str
) -> None:
    files = stdio_entry(stdio_server("files"))
    config = write_config(
        tmp_path / "toolbridge.json", {"a": files, "h": {**files, "tools": {"deny": [rule]}}}
    )
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    done = toolbridge("call", "h__delete_file", json.dumps({"path": str(victim)}), "--config", str(config))
    assert done.returncode == 1
    assert "Unknown tool" in done.stderr
    done = toolbridge(
        "call", "delete_file", json.dumps({"path": str(victim)}), "--server", "h", "--config", str(config)
    )
    assert done.returncode == 1
    assert victim.exists()


def careful_config(tmp_path: Path, stdio_server: StdioServer) -> Path:
    """A `files` server whose `delete_file` the default agent's approval rules hold back and whose
    `read_file` its tool rules leave out."""
    path = tmp_path / "toolbridge.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {"files": stdio_entry(stdio_server("files"))},
                "agents": {
                    "default": {
                        "approval": {"tools": {"delete_file": "always"}},
                        "tools": {"deny": ["read_file"]},
                    }
                },
            }
        )
    )
    return path


def test_call_asks_on_the_terminal_before_a_call_that_needs_approval(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    config = careful_config(tmp_path, stdio_server)
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    command = [*TOOLBRIDGE, "call", "delete_file", json.dumps({"path": str(victim)}), "--config", str(config)]
    with Terminal(command, env={**os.environ, "NO_COLOR": "1"}, cwd=tmp_path) as terminal:
        terminal.expect("(the approval rule for tool 'delete_file' says 'always')")
        terminal.type("n")
        terminal.expect("The user declined this call to 'delete_file', so it did not run.")
        assert terminal.wait() == 1
    assert victim.exists()
    assert logged_stats()["delete_file", "files"]["denied"] == 1


def test_call_without_a_terminal_refuses_what_needs_approval_unless_yes(
    tmp_path: Path, stdio_server: StdioServer
) -> None:
    config = careful_config(tmp_path, stdio_server)
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    delete = ["call", "delete_file", json.dumps({"path": str(victim)}), "--config", str(config)]

    refused = toolbridge(*delete)  # stdin is not a terminal: nobody can be asked
    assert refused.returncode == 1
    assert (
        "This call to 'delete_file' needs the user's approval (the approval rule for tool 'delete_file' "
        "says 'always'), and no one could be asked here, so it did not run."
    ) in " ".join(refused.stderr.split())
    assert victim.exists()
    left_out = toolbridge("call", "read_file", json.dumps({"path": str(victim)}), "--config", str(config))
    assert left_out.returncode == 1
    assert "Tool 'read_file' is not allowed here (the agent 'default''s tool rules" in left_out.stderr
    approved = toolbridge(*delete, "--yes")
    assert approved.returncode == 0, approved.stderr
    assert not victim.exists()

    stats = logged_stats()
    delete_file, read_file = stats["delete_file", "files"], stats["read_file", "files"]
    assert (delete_file["calls"], delete_file["denied"], delete_file["succeeded"]) == (2, 1, 1)
    assert (delete_file["callers"], read_file["callers"]) == ({"cli": 2}, {"cli": 1})
