"""What `ask` takes in, as a user of `llm` expects: the question on stdin or piped text before it, `-o`
model options, `-c` to continue the last chat, `-s` instructions, `-a` files, and a reader of its output
that closes early.

Commands run in this process (`cli_helpers.toolbridge`), or as real processes where the process is the
point, with their own config and database under tmp_path.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli.cli_helpers import (
    TOOLBRIDGE,
    environment,
    toolbridge,
    write_config,
)
from toolbridge.testing import ScriptedModelServer, Turn

# -- the habits of every command line ----------------------------------------------------------------


@pytest.mark.slow
def test_model_options_on_the_command_line_reach_the_model(tmp_path: Path) -> None:
    def cool_and_short(request: Any) -> bool:
        return request.body.get("temperature") == 0.2 and request.body.get("max_tokens") == 50

    with ScriptedModelServer([Turn.text("Cool.").expecting(cool_and_short)]) as model:
        config = write_config(
            tmp_path,
            {"models": {"m": {"provider": "openai-compatible", "base_url": model.base_url, "model": "m"}}},
        )
        done = toolbridge(
            tmp_path,
            "ask",
            "-o",
            "temperature",
            "0.2",
            "-o",
            "max_tokens",
            "50",
            "--config",
            str(config),
            "Hi",
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Cool."
    wrong = toolbridge(tmp_path, "ask", "-o", "temprature", "0.2", "--config", str(config), "Hi")
    assert wrong.returncode == 1
    assert "-o temprature: unknown model option; use one of temperature, max_tokens" in wrong.stderr


@pytest.mark.slow
def test_ask_continue_asks_in_the_last_chat(tmp_path: Path) -> None:
    def remembers(request: Any) -> bool:
        said = [message["content"] for message in request.messages if message["role"] != "system"]
        return said == ["My name is Ann.", "Hello Ann.", "What is my name?"]

    script = [Turn.text("Hello Ann."), Turn.text("Ann.").expecting(remembers)]
    with ScriptedModelServer(script) as model:
        config = write_config(
            tmp_path,
            {"models": {"m": {"provider": "openai-compatible", "base_url": model.base_url, "model": "m"}}},
        )
        db = str(tmp_path / "chats.db")
        first = toolbridge(tmp_path, "ask", "--config", str(config), "--db", db, "My name is Ann.")
        assert first.returncode == 0, first.stderr
        again = toolbridge(tmp_path, "ask", "-c", "--config", str(config), "--db", db, "What is my name?")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "Ann."


def test_ask_continue_goes_on_with_the_chats_model_and_history_says_which_answered(tmp_path: Path) -> None:
    two = {"models": {"quick": {"provider": "demo"}, "other": {"provider": "demo"}}, "default_model": "quick"}
    config = str(write_config(tmp_path, two))
    db = str(tmp_path / "chats.db")
    first = toolbridge(tmp_path, "ask", "-m", "other", "--config", config, "--db", db, "Hi")
    assert first.returncode == 0, first.stderr
    again = toolbridge(tmp_path, "ask", "-c", "--config", config, "--db", db, "And again")  # no -m
    assert again.returncode == 0, again.stderr
    switched = toolbridge(tmp_path, "ask", "-c", "-m", "quick", "--config", config, "--db", db, "Now you")
    assert switched.returncode == 0, switched.stderr

    listed = toolbridge(tmp_path, "history", "--json", "--db", db, "--config", config)
    (chat,) = json.loads(listed.stdout)
    assert (chat["model"], chat["answered_by"]) == ("quick", "quick")
    shown = toolbridge(tmp_path, "history", "show", str(chat["id"]), "--json", "--db", db, "--config", config)
    messages = json.loads(shown.stdout)["messages"]
    answers = [message.get("model") for message in messages if message["role"] == "assistant"]
    assert answers == ["other", "other", "quick"]
    assert all("model" not in message for message in messages if message["role"] == "user")
    table = toolbridge(tmp_path, "history", "--db", db, "--config", config)
    header = table.stdout.splitlines()[1]
    assert "model" in header.split()


@pytest.mark.slow
@pytest.mark.parametrize("question_argument", [[], ["-"]])
def test_ask_reads_the_question_from_stdin(tmp_path: Path, question_argument: list[str]) -> None:
    done = toolbridge(tmp_path, "ask", "--model", "demo", *question_argument, stdin="What is 15 + 27?\n")
    assert done.returncode == 0, done.stderr
    assert "[demo model] 15 + 27 = 42" in done.stdout


@pytest.mark.slow
def test_piped_stdin_with_a_question_is_put_before_it(tmp_path: Path) -> None:
    """`cat notes.txt | toolbridge ask "Summarize"`, as `llm` reads it."""

    def notes_then_question(request: Any) -> bool:
        return request.messages[-1]["content"] == "Buy milk.\nCall Ann.\n\nSummarize"

    with ScriptedModelServer([Turn.text("Two errands.").expecting(notes_then_question)]) as model:
        config = write_config(
            tmp_path,
            {"models": {"m": {"provider": "openai-compatible", "base_url": model.base_url, "model": "m"}}},
        )
        done = toolbridge(
            tmp_path, "ask", "--config", str(config), "Summarize", stdin="Buy milk.\nCall Ann.\n"
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Two errands."


@pytest.mark.slow
@pytest.mark.parametrize("json_option", [[], ["--json"]])
def test_ask_into_a_pipe_its_reader_closed_ends_quietly(tmp_path: Path, json_option: list[str]) -> None:
    """`toolbridge ask ... | head -1`: the reader is gone before the answer is written (its end of the
    pipe is closed before toolbridge starts, so every write fails); no traceback, SIGPIPE's exit code."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [*TOOLBRIDGE, "ask", "--model", "demo", *json_option, "What is 15 + 27?"],
            stdin=subprocess.DEVNULL, stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=90,
            env=environment(tmp_path), cwd=tmp_path, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""


def test_ask_with_an_empty_stdin_says_how_to_ask(tmp_path: Path) -> None:
    done = toolbridge(tmp_path, "ask", "--model", "demo", stdin="")
    assert done.returncode == 1
    assert 'toolbridge ask "What is 15 + 27?"' in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_system_replaces_the_agents_instructions_for_the_run(tmp_path: Path) -> None:
    def pirate_only(request: Any) -> bool:
        system = request.messages[0]["content"]
        return "Talk like a pirate." in system and "Be formal." not in system

    with ScriptedModelServer([Turn.text("Arr.").expecting(pirate_only)]) as model:
        config = write_config(
            tmp_path,
            {
                "models": {"m": {"provider": "openai-compatible", "base_url": model.base_url, "model": "m"}},
                "agents": {"default": {"instructions": "Be formal."}},
            },
        )
        done = toolbridge(tmp_path, "ask", "-s", "Talk like a pirate.", "--config", str(config), "Hello")
    assert done.returncode == 0, done.stderr
    assert "Arr." in done.stdout


# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.mark.slow
def test_attachments_go_with_the_question_as_an_image_and_a_text_file(tmp_path: Path) -> None:
    (tmp_path / "pixel.png").write_bytes(PIXEL)
    (tmp_path / "notes.txt").write_text("Meeting moved to 3 pm.", encoding="utf-8")

    def sees_both(request: Any) -> bool:
        user = next(message for message in request.messages if message["role"] == "user")
        said = json.dumps(user["content"])
        return (
            "data:image/png;base64," + base64.b64encode(PIXEL).decode() in said
            and "Meeting moved to 3 pm." in said
            and "What do these say?" in said
        )

    with ScriptedModelServer([Turn.text("A pixel and a meeting note.").expecting(sees_both)]) as model:
        config = write_config(
            tmp_path,
            {
                "models": {
                    "m": {"provider": "openai", "base_url": model.base_url, "model": "m", "api_key": "t"}
                }
            },
        )
        done = toolbridge(
            tmp_path,
            "ask",
            "-a",
            "pixel.png",
            "-a",
            "notes.txt",
            "--config",
            str(config),
            "What do these say?",
        )
        problems = model.script_problems()
    assert done.returncode == 0, done.stderr
    assert problems == []
    missing = toolbridge(tmp_path, "ask", "-a", "nowhere.pdf", "--config", str(config), "Hi")
    assert missing.returncode == 1
    assert "-a nowhere.pdf: cannot read it (No such file or directory)" in missing.stderr
