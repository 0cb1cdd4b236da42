"""`toolbridge history off|on|status` (llm's `logs off`) and `--log` / `-n/--no-log` on `ask` and `chat`:
with history off their chats are stored nowhere, and `ask -c` says why it cannot continue one."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from cli_helpers import in_process, toolbridge


def stored_titles(tmp_path: Path) -> list[str]:
    done = toolbridge(tmp_path, "history", "--json")
    assert done.returncode == 0, done.stderr
    return [chat["title"] for chat in json.loads(done.stdout)]


def ask(tmp_path: Path, *args: str) -> None:
    done = toolbridge(tmp_path, "ask", "--model", "demo", *args)
    assert done.returncode == 0, done.stderr


def test_with_history_off_ask_and_chat_store_nothing_and_on_stores_again(tmp_path: Path) -> None:
    turned_off = toolbridge(tmp_path, "history", "off")
    assert turned_off.returncode == 0, turned_off.stderr
    assert "History is off" in turned_off.stderr
    settings = tmp_path / "data-home" / "toolbridge" / "settings.json"
    assert json.loads(settings.read_text()) == {"history": False}
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600

    ask(tmp_path, "What is 1 + 2?")
    chatted = toolbridge(tmp_path, "chat", "--model", "demo", stdin="What is 2 + 2?\nWhat is 3 + 3?\n")
    assert chatted.returncode == 0, chatted.stderr
    assert chatted.stderr.count("not stored") == 1, chatted.stderr  # said once, not per message
    assert "toolbridge history on" in chatted.stderr
    assert "Saved as chat" not in chatted.stdout
    assert stored_titles(tmp_path) == []

    assert toolbridge(tmp_path, "history", "on").returncode == 0
    ask(tmp_path, "What is 4 + 5?")
    assert stored_titles(tmp_path) == ["What is 4 + 5?"]


def test_ask_continue_with_history_off_says_history_is_off_and_how_to_turn_it_on(tmp_path: Path) -> None:
    ask(tmp_path, "What is 1 + 2?")
    toolbridge(tmp_path, "history", "off")
    refused = toolbridge(tmp_path, "ask", "--model", "demo", "-c", "And 2 + 2?")
    assert refused.returncode == 1
    assert "history is off" in refused.stderr
    assert "toolbridge history on" in refused.stderr
    resumed = toolbridge(tmp_path, "chat", "--model", "demo", "--resume", stdin="Hi\n")
    assert resumed.returncode == 1
    assert "history is off" in resumed.stderr
    # --log decides for this one command: it continues the chat and stores the turn.
    ask(tmp_path, "-c", "--log", "And 2 + 2?")
    shown = json.loads(toolbridge(tmp_path, "history", "show", "1", "--json").stdout)
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"] == [
        "What is 1 + 2?",
        "And 2 + 2?",
    ]


def test_log_and_no_log_decide_for_one_command(tmp_path: Path) -> None:
    ask(tmp_path, "-n", "What is 1 + 2?")
    ask(tmp_path, "--no-log", "What is 2 + 3?")
    chatted = toolbridge(tmp_path, "chat", "--model", "demo", "-n", stdin="What is 3 + 4?\n")
    assert "not stored (-n/--no-log)" in chatted.stderr
    assert stored_titles(tmp_path) == []
    toolbridge(tmp_path, "history", "off")
    ask(tmp_path, "--log", "What is 4 + 5?")
    assert stored_titles(tmp_path) == ["What is 4 + 5?"]


def test_status_says_on_or_off_where_the_database_is_and_how_many_chats_it_holds(tmp_path: Path) -> None:
    ask(tmp_path, "What is 1 + 2?")
    ask(tmp_path, "What is 2 + 3?")
    status = toolbridge(tmp_path, "history", "status")
    assert status.returncode == 0, status.stderr
    assert "History is on" in status.stdout
    assert f"{tmp_path / 'toolbridge.db'} (2 chats)" in status.stdout
    toolbridge(tmp_path, "history", "off")
    as_json = json.loads(toolbridge(tmp_path, "history", "status", "--json").stdout)
    assert (as_json["history"], as_json["chats"]) == ("off", 2)
    assert as_json["database"].endswith("toolbridge.db")


def test_the_settings_file_can_be_named_and_a_damaged_one_is_an_error(tmp_path: Path) -> None:
    named = tmp_path / "elsewhere" / "settings.json"
    env = {"XDG_DATA_HOME": str(tmp_path / "data-home"), "TOOLBRIDGE_SETTINGS_FILE": str(named)}
    assert in_process("history", "off", env=env).returncode == 0
    assert json.loads(named.read_text()) == {"history": False}
    named.write_text("{not json")
    done = in_process("ask", "--model", "demo", "--db", str(tmp_path / "t.db"), "What is 1 + 2?", env=env)
    assert done.returncode == 1
    assert f"the settings file {named} cannot be read" in done.stderr
