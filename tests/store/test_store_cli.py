"""`toolbridge history`, `agents` and `stats`: output, `--json`, `--db` / config / env, and error exits.

Most run in-process through Typer's CliRunner (importing toolbridge takes seconds); one runs as a real
process to check the installed entry point end to end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from toolbridge.cli.commands import app
from toolbridge.store import Store, ToolCaller, ToolCallLogEntry
from toolbridge.tools.cache import argument_hash
from toolbridge.types import AssistantMessage, ToolCall, ToolMessage, ToolResult, UserMessage


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No stray config or database: cwd, XDG dirs and the env vars all point into tmp_path."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLBRIDGE_DB", raising=False)
    monkeypatch.delenv("TOOLBRIDGE_CONFIG", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def ok_json(*args: str) -> Any:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.stderr + result.stdout
    return json.loads(result.stdout)


@pytest.fixture
def filled(db_url: str) -> str:
    with Store(db_url) as store:
        older = store.create_chat(agent="helper")
        store.append_message(older.id, UserMessage(content="What is 15 + 27?"))
        call = ToolCall(name="add", arguments={"a": 15, "b": 27}, id="call_1")
        store.append_message(older.id, AssistantMessage(content="", reasoning="use add", tool_calls=[call]))
        result = ToolResult.error("call_1", "server down", kind="server_unavailable", server="basic")
        store.append_message(older.id, ToolMessage(name="add", result=result))
        newer = store.create_chat(title="Second chat")
        store.append_message(newer.id, UserMessage(content="hello"))
        now = datetime.now(UTC)
        for minutes_ago, duration, failed in ((120, 0.3, False), (5, 0.1, False), (1, 0.2, True)):
            store.log_tool_call(
                ToolCallLogEntry(
                    tool="add",
                    server="basic",
                    call_id=f"call_{minutes_ago}",
                    argument_hash=argument_hash({}),
                    started_at=now - timedelta(minutes=minutes_ago),
                    duration=duration,
                    status="error" if failed else "ok",
                    error="server down" if failed else None,
                    cache_hit=minutes_ago == 5,
                )
            )
    return db_url


def test_history_lists_chats_newest_first(filled: str) -> None:
    chats = ok_json("history", "--db", filled)
    assert [(c["id"], c["title"], c["agent"], c["message_count"]) for c in chats] == [
        (2, "Second chat", None, 1),
        (1, "What is 15 + 27?", "helper", 3),
    ]
    assert [c["id"] for c in ok_json("history", "--limit", "1", "--db", filled)] == [2]
    table = invoke("history", "--db", filled)
    assert table.exit_code == 0
    assert "Second chat" in table.stdout
    assert "helper" in table.stdout


def test_history_searches_and_deletes_chats(filled: str) -> None:
    """`history -q TEXT` finds chats by title or any message, case-insensitive; `history delete ID`."""
    assert [c["id"] for c in ok_json("history", "-q", "SERVER DOWN", "--db", filled)] == [1]
    assert [c["id"] for c in ok_json("history", "--search", "second", "--db", filled)] == [2]
    assert ok_json("history", "-q", "nowhere", "--db", filled) == []
    deleted = invoke("history", "delete", "1", "--db", filled)
    assert deleted.exit_code == 0, deleted.stderr
    assert deleted.stderr == "Deleted chat 1.\n"
    assert [c["id"] for c in ok_json("history", "--db", filled)] == [2]
    gone = invoke("history", "delete", "1", "--db", filled)
    assert gone.exit_code == 1
    assert "no chat with id 1" in gone.stderr


def test_history_show_prints_every_message(filled: str) -> None:
    chat = ok_json("history", "show", "1", "--db", filled)
    assert chat["title"] == "What is 15 + 27?"
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "tool"]
    assert chat["messages"][1]["tool_calls"][0]["arguments"] == {"a": 15, "b": 27}
    assert chat["messages"][2]["result"]["is_error"] is True

    shown = invoke("history", "show", "1", "--db", filled)
    assert shown.exit_code == 0
    for text in ("What is 15 + 27?", "use add", '"a": 15', "server down", "error"):
        assert text in shown.stdout


def test_history_of_an_unknown_chat_fails_with_a_hint(filled: str) -> None:
    result = invoke("history", "show", "99", "--db", filled)
    assert result.exit_code == 1
    assert "no chat with id 99" in result.stderr
    assert "toolbridge history" in result.stderr


CONFIG = {
    "mcpServers": {"excel": {"command": "excel-mcp-server"}, "time": {"command": "mcp-server-time"}},
    "models": {"fast": {"provider": "openai", "model": "gpt-4o-mini"}},
    "agents": {"configured-helper": {"description": "From the file.", "model": "fast"}},
}


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "toolbridge.json"
    path.write_text(json.dumps(CONFIG))
    return path


def test_agents_create_list_edit_show_delete(db_url: str, config_file: Path) -> None:
    created = invoke(
        "agents", "create", "excel-helper", "--model", "openai:gpt-4o", "--instructions", "Be brief.",
        "--server", "excel", "--allow", "read_*", "--deny", "delete_*", "--max-steps", "5", "--db", db_url,
    )  # fmt: skip
    assert created.exit_code == 0, created.stderr
    assert invoke("agents", "create", "plain", "--no-tools", "--db", db_url).exit_code == 0

    listed = ok_json("agents", "--db", db_url)
    assert [agent["name"] for agent in listed] == ["default", "configured-helper", "excel-helper", "plain"]
    helper = listed[2]
    assert (helper["model"], helper["instructions"], helper["servers"]) == (
        "openai:gpt-4o",
        "Be brief.",
        ["excel"],
    )
    assert helper["tools"] == {"allow": ["read_*"], "deny": ["delete_*"]}
    assert helper["max_steps"] == 5
    assert listed[3]["tool_calling"] is False

    instructions = Path("instructions.txt")
    instructions.write_text("Quote the cells you used.")
    edited = invoke(
        "agents", "edit", "excel-helper", "--instructions-file", str(instructions), "--all-servers",
        "--approval", "always", "--db", db_url,
    )  # fmt: skip
    assert edited.exit_code == 0, edited.stderr
    helper = ok_json("agents", "show", "excel-helper", "--db", db_url)
    assert helper["instructions"] == "Quote the cells you used."
    assert helper["servers"] is None
    assert helper["approval"]["default"] == "always"
    assert helper["model"] == "openai:gpt-4o"  # untouched
    assert helper["tools"]["allow"] == ["read_*"]

    shown = invoke("agents", "show", "excel-helper", "--db", db_url)
    assert "Quote the cells you used." in shown.stdout

    assert invoke("agents", "delete", "plain", "--db", db_url).exit_code == 0
    assert [agent["name"] for agent in ok_json("agents", "--db", db_url)][2:] == ["excel-helper"]


def test_agents_lists_the_config_files_and_the_databases_agents_with_where_each_is(
    db_url: str, config_file: Path
) -> None:
    assert invoke("agents", "create", "stored", "--model", "demo", "--db", db_url).exit_code == 0
    listed = ok_json("agents", "--db", db_url)
    where = {agent["name"]: (agent["source"], agent["location"]) for agent in listed}
    assert where == {
        "default": ("built-in", None),
        "configured-helper": ("config", str(config_file)),
        "stored": ("database", Store(db_url).safe_url),
    }
    shown = ok_json("agents", "show", "configured-helper", "--db", db_url)
    assert (shown["description"], shown["source"]) == ("From the file.", "config")

    table = CliRunner().invoke(app, ["agents", "--db", db_url], env={"COLUMNS": "200"})
    rows = {line.split("│")[1].strip(): line for line in table.stdout.splitlines() if line.count("│") > 2}
    assert "config file" in rows["configured-helper"]
    assert "database" in rows["stored"]
    assert "built-in" in rows["default"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("create", "x", "--model", "gpt-5"),
            "agent 'x': no model named 'gpt-5' (configured models: fast). Use a configured name",
        ),
        (
            ("create", "x", "--server", "exel"),
            "agent 'x': no MCP server named 'exel'; configured servers: excel, time",
        ),
        (("create", "configured-helper"), "agent 'configured-helper' is already defined by the config file"),
        (("create", "default"), "agent 'default' is already defined by toolbridge"),
        (("edit", "stored", "--model", "nope"), "no model named 'nope'"),
        (("edit", "configured-helper", "--model", "fast"), "is defined in the config file"),
        (("delete", "configured-helper"), "is defined in the config file"),
    ],
)
def test_stored_agents_are_checked_against_the_config_when_written(
    db_url: str, config_file: Path, args: tuple[str, ...], message: str
) -> None:
    assert invoke("agents", "create", "stored", "--db", db_url).exit_code == 0
    result = invoke("agents", *args, "--db", db_url)
    assert result.exit_code == 1
    assert message in result.stderr
    assert [agent["name"] for agent in ok_json("agents", "--db", db_url)] == [
        "default",
        "configured-helper",
        "stored",
    ]


def test_a_run_of_an_agent_whose_model_is_gone_names_where_the_agent_is_defined(
    db_url: str, config_file: Path
) -> None:
    assert invoke("agents", "create", "stored", "--model", "fast", "--db", db_url).exit_code == 0
    config_file.write_text(json.dumps({**CONFIG, "models": {}, "agents": {}}))  # `fast` removed since
    result = invoke("ask", "--agent", "stored", "hello", "--db", db_url)
    assert result.exit_code == 1
    message = result.stderr.replace("\n", "")
    assert f"agent 'stored' (defined in the database {Store(db_url).safe_url}) uses model 'fast': " in message
    assert "no model named 'fast' (no models are configured)" in message


def test_inline_and_configured_models_and_demo_may_be_stored(db_url: str, config_file: Path) -> None:
    for index, model in enumerate(("fast", "demo", "openai:gpt-4o", "ollama", "ollama:qwen3:8b")):
        result = invoke("agents", "create", f"a{index}", "--model", model, "--db", db_url)
        assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("agents", "create", "taken"), "already exists; pick another name"),
        (("agents", "edit", "nobody", "--model", "x"), "no stored agent named 'nobody'"),
        (("agents", "edit", "taken"), "nothing to change"),
        (("agents", "show", "nobody"), "no agent named 'nobody'; the agents are: default, taken"),
        (("agents", "delete", "nobody"), "no stored agent named 'nobody'"),
        (("agents", "create", "x", "--instructions", "a", "--instructions-file", "f"), "not both"),
    ],
)
def test_agent_errors_exit_non_zero_and_say_what_to_do(
    db_url: str, args: tuple[str, ...], message: str
) -> None:
    assert invoke("agents", "create", "taken", "--db", db_url).exit_code == 0
    result = invoke(*args, "--db", db_url)
    assert result.exit_code == 1
    assert message in result.stderr
    assert result.stdout == ""


def test_stats_per_tool_with_since(filled: str) -> None:
    (add,) = ok_json("stats", "--db", filled)
    assert (add["tool"], add["server"], add["calls"], add["cache_hits"]) == ("add", "basic", 3, 1)
    assert add["success_rate"] == pytest.approx(2 / 3)
    assert add["p50"] == pytest.approx(0.2)
    assert add["last_error"] == "server down"
    (recent,) = ok_json("stats", "--since", "1h", "--db", filled)
    assert recent["calls"] == 2
    assert ok_json("stats", "--since", "2099-01-01", "--db", filled) == []

    table = invoke("stats", "--db", filled)
    assert table.exit_code == 0
    assert "server down" in table.stdout
    assert "67%" in table.stdout


def test_stats_do_not_count_a_declined_call_as_a_failure(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    with Store(db_url) as store:
        for result in (
            ToolResult(call_id="c1", server="basic"),
            ToolResult.error("c2", "The user declined this call", kind="denied", server="basic"),
            ToolResult.error("c3", "The run was cancelled.", kind="cancelled", server="basic"),
        ):
            call = ToolCall(name="echo", arguments={}, id=result.call_id)
            store.log_tool_call(ToolCallLogEntry.from_result(call, result, started_at=datetime.now(UTC)))
    (echo,) = ok_json("stats", "--db", db_url)
    assert (echo["calls"], echo["denied"], echo["cancelled"], echo["success_rate"]) == (3, 1, 1, 1.0)
    table = invoke("stats", "--db", db_url).stdout
    assert "100%" in table
    assert "1 declined" in table
    assert "1 cancelled" in table
    assert "declined this call" not in table  # not shown as the tool's last error


def test_stats_with_a_bad_since_fails(db_url: str) -> None:
    result = invoke("stats", "--since", "yesterday", "--db", db_url)
    assert result.exit_code == 1
    assert "--since" in result.stderr
    assert "7d" in result.stderr


def test_the_database_comes_from_the_config_then_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from_config = tmp_path / "from-config.db"
    Path("toolbridge.json").write_text(json.dumps({"mcpServers": {}, "database": f"sqlite:///{from_config}"}))
    assert invoke("agents", "create", "configured").exit_code == 0
    assert from_config.exists()
    assert not (tmp_path / "data").exists()  # the default location was not touched

    monkeypatch.setenv("TOOLBRIDGE_DB", str(tmp_path / "from-env.db"))
    assert [agent["name"] for agent in ok_json("agents")] == ["default"]  # the environment beats the config
    assert [agent["name"] for agent in ok_json("agents", "--db", str(from_config))] == [
        "default",
        "configured",
    ]


def test_an_unset_variable_in_the_database_setting_stops_only_commands_that_use_it(tmp_path: Path) -> None:
    Path("toolbridge.json").write_text(json.dumps({"database": "${UNSET_DB_XYZ}"}))
    failed = invoke("history")
    assert failed.exit_code == 1
    assert "database: environment variable 'UNSET_DB_XYZ' is not set (the database setting uses it)" in (
        failed.stderr.replace("\n", "")
    )
    assert invoke("history", "--db", str(tmp_path / "given.db")).exit_code == 0


def test_default_database_is_in_the_user_data_dir(tmp_path: Path) -> None:
    assert ok_json("history") == []
    assert (tmp_path / "data" / "toolbridge" / "toolbridge.db").exists()


def test_a_bad_database_url_is_an_error_exit(tmp_path: Path) -> None:
    result = invoke("history", "--db", "nosuchdriver://x")
    assert result.exit_code == 1
    assert "nosuchdriver" in result.stderr


@pytest.mark.slow
def test_history_as_a_real_process(filled: str, tmp_path: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("TOOLBRIDGE_DB", None)
    done = subprocess.run(
        [sys.executable, "-m", "toolbridge", "history", "--json", "--db", filled],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [chat["title"] for chat in json.loads(done.stdout)] == ["Second chat", "What is 15 + 27?"]
    missing = subprocess.run(
        [sys.executable, "-m", "toolbridge", "history", "show", "42", "--db", filled],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert missing.returncode == 1
    assert "no chat with id 42" in missing.stderr


def test_stats_show_who_made_the_calls(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    callers: list[ToolCaller] = ["agent", "gateway", "openapi", "gateway", "cli"]
    with Store(db_url) as store:
        for number, caller in enumerate(callers):
            call = ToolCall(name="echo", arguments={}, id=f"c{number}")
            result = ToolResult(call_id=call.id, server="basic")
            entry = ToolCallLogEntry.from_result(call, result, started_at=datetime.now(UTC), caller=caller)
            store.log_tool_call(entry)
    (echo,) = ok_json("stats", "--db", db_url)
    assert echo["callers"] == {"gateway": 2, "agent": 1, "cli": 1, "openapi": 1}  # most first
    table = invoke("stats", "--db", db_url).stdout
    assert "callers" in table
    assert all(line in table for line in ("2 gateway", "1 agent", "1 cli", "1 openapi"))
    monkeypatch.setenv("COLUMNS", "40")  # one block per tool
    assert "5 calls (2 gateway, 1 agent, 1 cli, 1 openapi)" in invoke("stats", "--db", db_url).stdout
