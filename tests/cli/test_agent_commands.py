"""`toolbridge ask` and `chat`: the demo model, a scripted model, approval, Ctrl-C (a real process)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from cli.cli_helpers import TOOLBRIDGE, StdioServer, environment, toolbridge
from toolbridge.agent import parse_event
from toolbridge.config.model import ServerConfig
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow


def scripted_config(tmp_path: Path, model: ScriptedModelServer, **extra: Any) -> Path:
    path = tmp_path / "toolbridge.json"
    document = {
        "models": {
            "scripted": {"provider": "openai-compatible", "base_url": model.base_url, "model": "scripted"}
        },
        "default_model": "scripted",
        **extra,
    }
    path.write_text(json.dumps(document))
    return path


def events_of(stdout: str) -> list[Any]:
    return [parse_event(line) for line in stdout.splitlines() if line.strip()]


def test_ask_with_the_demo_model_runs_the_whole_loop(tmp_path: Path) -> None:
    done = toolbridge(tmp_path, "ask", "--model", "demo", "What is 15 + 27?")
    assert done.returncode == 0, done.stderr
    # Tool calls go beside the answer: on stderr when stdout is not a terminal (`ask > answer.txt`).
    assert "→ calculate" in done.stderr
    assert "✓ calculate" in done.stderr
    assert done.stdout.splitlines() == ["[demo model] Let me use `calculate`.", "[demo model] 15 + 27 = 42"]


def test_ask_without_any_model_says_how_to_configure_one(tmp_path: Path) -> None:
    env = environment(tmp_path)
    env["OLLAMA_HOST"] = "127.0.0.1:9"  # nothing listens there
    done = subprocess.run(
        [*TOOLBRIDGE, "ask", "hi"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "--model demo" in done.stderr
    assert "OPENAI_API_KEY" in done.stderr


def test_ask_json_prints_every_event_through_a_real_model_endpoint(tmp_path: Path) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"}, id="call_1")),
        Turn.text("15 + 27 is 42.").expecting(lambda request: request.last_message["content"] == "42"),
    ]
    with ScriptedModelServer(script) as model:
        config = scripted_config(tmp_path, model)
        done = toolbridge(tmp_path, "ask", "--config", str(config), "--json", "What is 15 + 27?")
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    kinds = [event.type for event in events]
    assert kinds[:2] == ["message_added", "step_started"]
    assert kinds[-1] == "final"
    finished = next(event for event in events if event.type == "tool_call_finished")
    assert (finished.name, finished.result_preview, finished.is_error) == ("calculate", "42", False)
    assert "".join(e.text for e in events if e.type == "text_delta" and e.step == 2) == "15 + 27 is 42."
    assert events[-1].result.output == "15 + 27 is 42."


@pytest.fixture
def echo_needs_approval(tmp_path: Path, stdio_server: StdioServer) -> Callable[[ScriptedModelServer], Path]:
    basic = stdio_server("basic")

    def make(model: ScriptedModelServer) -> Path:
        return scripted_config(
            tmp_path,
            model,
            mcpServers={"basic": {"command": basic.command, "args": basic.args}},
            agents={"default": {"approval": {"tools": {"echo": "always"}}}},
        )

    return make


def test_a_call_needing_approval_is_declined_without_a_terminal(
    tmp_path: Path, echo_needs_approval: Callable[[ScriptedModelServer], Path]
) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("echo", {"text": "secret"})),
        Turn.text("Understood.").expecting(
            lambda request: "no one could be asked" in request.last_message["content"]
        ),
    ]
    with ScriptedModelServer(script) as model:
        done = toolbridge(tmp_path, "ask", "--config", str(echo_needs_approval(model)), "Echo it")
    assert done.returncode == 0, done.stderr
    assert "it needs approval and stdin is not a terminal to ask on. Pass --yes" in done.stderr
    # Declining is the person's own decision: not shown as a failure of the tool.
    assert '– echo {"text": "secret"}  declined, the model was told so' in done.stderr
    assert "✗" not in done.stdout


def test_yes_approves_the_call(
    tmp_path: Path, echo_needs_approval: Callable[[ScriptedModelServer], Path]
) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("echo", {"text": "secret"})),
        Turn.text("Done.").expecting(lambda request: request.last_message["content"] == "secret"),
    ]
    with ScriptedModelServer(script) as model:
        done = toolbridge(tmp_path, "ask", "--yes", "--config", str(echo_needs_approval(model)), "Echo it")
    assert done.returncode == 0, done.stderr
    assert "✓ echo" in done.stderr


def read_events_until(stream: IO[str], wanted: str) -> Iterator[Any]:
    for line in stream:
        event = parse_event(line)
        yield event
        if event.type == wanted:
            return
    raise AssertionError(f"the stream ended before a {wanted!r} event")


def test_ctrl_c_in_chat_stops_the_answer_but_not_the_session(tmp_path: Path) -> None:
    script = [
        # A slow answer: Ctrl-C arrives while it streams.
        Turn.text("This answer is long " * 50, chunk_size=4, delay=0.05),
        Turn.text("Second answer.").expecting(
            lambda request: request.last_message == {"role": "user", "content": "second question"}
        ),
    ]
    with ScriptedModelServer(script) as model:
        config = scripted_config(tmp_path, model)
        chat = subprocess.Popen(
            [*TOOLBRIDGE, "chat", "--json", "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(tmp_path),
            cwd=tmp_path,
        )
        try:
            assert chat.stdin is not None
            assert chat.stdout is not None
            chat.stdin.write("first question\n")
            chat.stdin.flush()
            for _ in read_events_until(chat.stdout, "text_delta"):
                pass
            chat.send_signal(signal.SIGINT)
            final = list(read_events_until(chat.stdout, "final"))[-1]
            assert final.result.stop_reason == "cancelled"
            assert model.wait_for_reply(1).client_disconnected

            chat.stdin.write("second question\n")
            chat.stdin.close()
            second = list(read_events_until(chat.stdout, "final"))[-1]
            assert second.result.output == "Second answer."
            assert chat.wait(timeout=30) == 0
        finally:
            if chat.poll() is None:
                chat.kill()
                chat.wait()


def test_the_demo_model_reads_a_named_workbook_through_excel_mcp_server(
    tmp_path: Path, published_server: Callable[..., ServerConfig]
) -> None:
    excel = published_server("excel-mcp-server")
    config = tmp_path / "toolbridge.json"
    config.write_text(json.dumps({"mcpServers": {"excel": {"command": excel.command, "args": excel.args}}}))
    book = str(tmp_path / "myfile.xlsx")
    for tool, arguments in [
        ("create_workbook", {"path": book}),
        (
            "write_range",
            {"path": book, "sheet": "Sheet1", "at": "A1", "rows": [["fruit", "qty"], ["apple", 3]]},
        ),
    ]:
        # Destructive tools: `call` asks first, and --yes approves them where there is no terminal.
        made = toolbridge(tmp_path, "call", tool, json.dumps(arguments), "--yes", "--config", str(config))
        assert made.returncode == 0, made.stderr

    done = toolbridge(tmp_path, "ask", "--model", "demo", "--config", str(config), "what is in myfile.xlsx?")
    assert done.returncode == 0, done.stderr
    assert "→ read_range" in done.stderr
    answer = done.stdout.split("[demo model] Here is what myfile.xlsx contains", 1)[1]
    assert '["fruit","qty"],["apple",3]' in answer


def test_ask_keeps_the_conversation_and_logs_the_calls(tmp_path: Path) -> None:
    db = str(tmp_path / "tb.db")
    done = toolbridge(tmp_path, "ask", "--model", "demo", "--db", db, "What is 15 + 27?")
    assert done.returncode == 0, done.stderr
    chats = json.loads(toolbridge(tmp_path, "history", "--json", "--db", db).stdout)
    assert [(chat["title"], chat["message_count"]) for chat in chats] == [("What is 15 + 27?", 4)]
    shown = json.loads(
        toolbridge(tmp_path, "history", "show", str(chats[0]["id"]), "--json", "--db", db).stdout
    )
    roles = [message["role"] for message in shown["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    stats = json.loads(toolbridge(tmp_path, "stats", "--json", "--db", db).stdout)
    assert [(row["tool"], row["calls"], row["success_rate"]) for row in stats] == [("calculate", 1, 1.0)]
    # Logged by the call pipeline's observer, as the agent's call in this chat.
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT tool, caller, chat_id FROM tool_calls").fetchall()
    assert rows == [("calculate", "agent", chats[0]["id"])]


def test_chat_resume_continues_a_stored_chat_with_its_history(tmp_path: Path) -> None:
    db = str(tmp_path / "tb.db")
    script = [
        Turn.text("Nice to meet you, Ada."),
        Turn.text("Your name is Ada.").expecting(
            lambda request: (
                [m["content"] for m in request.messages if m["role"] == "user"]
                == ["My name is Ada.", "What is my name?"]
            )
        ),
    ]
    with ScriptedModelServer(script) as model:
        config = str(scripted_config(tmp_path, model))
        first = toolbridge(tmp_path, "chat", "--config", config, "--db", db, stdin="My name is Ada.\n")
        assert first.returncode == 0, first.stderr
        assert "Saved as chat 1" in first.stdout
        again = toolbridge(
            tmp_path, "chat", "--resume", "--config", config, "--db", db, stdin="What is my name?\n"
        )
        assert again.returncode == 0, again.stderr
        assert "Continuing chat 1 (2 messages)" in again.stdout
        assert "Your name is Ada." in again.stdout
    missing = toolbridge(tmp_path, "chat", "--resume", "7", "--db", db)
    assert missing.returncode == 1
    assert "no chat with id 7" in missing.stderr


def test_an_agent_created_in_the_store_answers_with_its_instructions(tmp_path: Path) -> None:
    db = str(tmp_path / "tb.db")
    created = toolbridge(
        tmp_path, "agents", "create", "pirate", "--instructions", "Talk like a pirate.", "--db", db
    )
    assert created.returncode == 0, created.stderr
    script = [
        Turn.text("Arr, hello.").expecting(
            lambda request: "Talk like a pirate." in request.messages[0]["content"]
        )
    ]
    with ScriptedModelServer(script) as model:
        config = str(scripted_config(tmp_path, model))
        done = toolbridge(tmp_path, "ask", "--agent", "pirate", "--config", config, "--db", db, "Hello")
    assert done.returncode == 0, done.stderr
    assert "Arr, hello." in done.stdout
    unknown = toolbridge(tmp_path, "ask", "--agent", "nobody", "--config", config, "--db", db, "Hello")
    assert unknown.returncode == 1
    assert "no agent named 'nobody'; the agents are: default, pirate" in unknown.stderr


@pytest.fixture
def two_file_servers(tmp_path: Path, stdio_server: StdioServer) -> Callable[..., Path]:
    """A config with two `files` servers (a and h): their `delete_file` is exposed as `h__delete_file`."""
    files = stdio_server("files")
    entry = {"command": files.command, "args": files.args}

    def make(model: ScriptedModelServer, agent: dict[str, Any]) -> Path:
        return scripted_config(
            tmp_path, model, mcpServers={"a": entry, "h": entry}, agents={"default": agent}
        )

    return make


@pytest.mark.parametrize(
    ("agent", "told"),
    [
        ({"approval": {"tools": {"delete_file": "always"}}}, "no one could be asked"),
        ({"approval": {"tools": {"h:delete_*": "always"}}}, "no one could be asked"),
        ({"tools": {"deny": ["delete_file"]}}, "is not allowed here (the agent 'default''s tool rules"),
        ({"tools": {"allow": ["read_file"]}}, "is not allowed here (the agent 'default''s tool rules"),
    ],
)
def test_agent_rules_for_a_tool_still_apply_when_a_collision_renames_it(
    tmp_path: Path, two_file_servers: Callable[..., Path], agent: dict[str, Any], told: str
) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    script = [
        Turn.tool_calls(ToolCallSpec("h__delete_file", {"path": str(victim)})),
        Turn.text("It stays.").expecting(lambda request: told in request.last_message["content"]),
    ]
    with ScriptedModelServer(script) as model:
        done = toolbridge(tmp_path, "ask", "--config", str(two_file_servers(model, agent)), "Delete it")
    assert done.returncode == 0, done.stderr
    assert victim.exists()
