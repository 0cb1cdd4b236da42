"""The web page's JSON API for resources and prompts over real HTTP: listings, a message with resources
attached, a message that starts with a server's prompt, and errors naming what could not be read."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from server_helpers import EventReader, serve_in_thread

from toolbridge.testing import ScriptedModelServer, Turn
from toolbridge.tools.resource_and_prompt_catalog import MAX_ATTACHED_BYTES

SERVERS = Path(__file__).parent.parent / "servers"
LIBRARY = {"library": {"command": sys.executable, "args": [str(SERVERS / "library.py")]}}
NO_TOOLS = {"default": {"tool_calling": False}}


def test_resources_and_prompts_are_listed(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None, mcp_servers=LIBRARY) as server:
        http = server.http()
        resources = http.get("/api/resources").json()
        prompts = http.get("/api/prompts", params={"server": "library"}).json()
        unknown = http.get("/api/prompts", params={"server": "nope"})

    assert [r["uri"] for r in resources["resources"]][:2] == ["note://readme", "note://todo"]
    assert resources["templates"][0]["uri_template"] == "note://{name}"
    assert resources["errors"] == {}
    review = next(p for p in prompts["prompts"] if p["name"] == "review")
    assert [a["name"] for a in review["arguments"]] == ["code", "language"]
    assert unknown.status_code == 404
    assert "no MCP server named 'nope'" in unknown.json()["error"]["message"]


def test_a_message_carries_resources_and_a_prompt_starts_a_chat(tmp_path: Path) -> None:
    turns = [
        Turn.text("Read.").expecting(
            lambda request: (
                request.last_message["content"]
                == [
                    {"type": "text", "text": "What does it say?"},
                    {"type": "text", "text": "Attached note://readme (text/plain):\nRead me first."},
                ]
            )
        ),
        Turn.text("Fine code.").expecting(
            lambda request: (
                request.last_message == {"role": "user", "content": "Review this python code:\nx = 1"}
            )
        ),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers=LIBRARY, agents=NO_TOOLS) as server,
    ):
        http = server.http()
        chat = http.post("/api/chats", json={"agent": "default"}).json()
        path = f"/api/chats/{chat['id']}/messages"
        with EventReader(http, chat["id"]) as events:
            attached = http.post(
                path, json={"content": "What does it say?", "attachments": [{"uri": "note://readme"}]}
            )
            assert attached.status_code == 202, attached.text
            events.until("final")
            prompted = http.post(path, json={"prompt": {"name": "review", "arguments": {"code": "x = 1"}}})
            assert prompted.status_code == 202, prompted.text
            events.until("final")
        greeted = http.post(path, json={"prompt": {"name": "greet", "server": "library"}})
        unreadable = http.post(
            path, json={"content": "Hm", "attachments": [{"uri": "nothing://x", "server": "library"}]}
        )
        empty = http.post(path, json={"content": " "})
        messages: list[dict[str, Any]] = http.get(path).json()

    assert messages[0]["attachments"][0]["uri"] == "note://readme"
    assert [m["content"] for m in messages[2:]] == [
        "Review this python code:\nx = 1",
        "Fine code.",
        "Hello!",
        "Hi, how can I help?",
    ]
    # A prompt that ends with the assistant's turn is stored and waits for the person's reply.
    assert greeted.status_code == 202
    assert greeted.json()["run_id"] is None
    assert [m["content"] for m in greeted.json()["opening"]] == ["Hello!", "Hi, how can I help?"]
    assert unreadable.status_code == 422
    assert "cannot attach 'nothing://x'" in unreadable.json()["error"]["message"]
    assert empty.status_code == 400


def test_template_and_prompt_arguments_are_completed_by_their_server(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None, mcp_servers=LIBRARY) as server:
        http = server.http()

        def complete(**asked: Any) -> Any:
            return http.post("/api/completions", json={"server": "library", **asked})

        note = complete(template="note://{name}", argument="name", value="t")
        language = complete(prompt="review", argument="language", value="r", context={"code": "x"})
        neither = complete(argument="name", value="")
        unknown = http.post("/api/completions", json={"server": "nope", "prompt": "review", "argument": "a"})

    assert note.json() == {"values": ["todo"]}
    assert language.json() == {"values": ["rust"]}
    assert neither.status_code == 400
    assert "name either a resource 'template' or a 'prompt'" in neither.json()["error"]["message"]
    assert unknown.status_code == 404


def test_a_large_attachment_is_cut_to_the_agents_limit_and_a_large_binary_one_refused(
    tmp_path: Path,
) -> None:
    """An attachment is stored with its message and sent with every later turn: text beyond the agent's
    `max_result_chars` is cut (with a note naming the URI), and binary content that cannot be cut is
    refused at attach time when over `MAX_ATTACHED_BYTES`."""
    bulky = {"bulky": {"command": sys.executable, "args": [str(SERVERS / "bulky.py")]}}
    kept = "abcdefghijklmnopqrstuvwxyz" * 40  # 1,040 characters: the first 1,000 are kept
    note = (
        "\n[Attachment truncated: 99,000 of 100,000 characters of text://100000 were cut. If you need the "
        "rest, read it in smaller parts, with a tool or a narrower resource of its server.]"
    )
    seen = f"Attached text://100000 (text/plain):\n{kept[:1000]}{note}"

    def sees_the_cut_text(request: Any) -> bool:
        first = next(message for message in request.messages if message["role"] == "user")
        return bool(first["content"] == [{"type": "text", "text": "Read"}, {"type": "text", "text": seen}])

    turns = [
        Turn.text("Long.").expecting(sees_the_cut_text),
        Turn.text("Still.").expecting(sees_the_cut_text),
    ]
    agents = {"default": {"tool_calling": False, "max_result_chars": 1000}}
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers=bulky, agents=agents) as server,
    ):
        http = server.http()
        chat = http.post("/api/chats", json={"agent": "default"}).json()
        path = f"/api/chats/{chat['id']}/messages"
        with EventReader(http, chat["id"]) as events:
            attached = http.post(path, json={"content": "Read", "attachments": [{"uri": "text://100000"}]})
            assert attached.status_code == 202, attached.text
            events.until("final")
            assert http.post(path, json={"content": "And?"}).status_code == 202
            events.until("final")
        too_big = http.post(
            path, json={"content": "Hm", "attachments": [{"uri": f"bytes://{MAX_ATTACHED_BYTES + 3}"}]}
        )
        messages: list[dict[str, Any]] = http.get(path).json()

    [stored] = messages[0]["attachments"]
    assert (stored["uri"], stored["text"]) == ("text://100000", kept[:1000] + note)
    assert too_big.status_code == 422
    assert too_big.json()["error"]["message"] == (
        f"cannot attach 'bytes://{MAX_ATTACHED_BYTES + 3}': the resource holds 5,242,883 bytes of binary "
        "content, more than the 5,242,880 an attachment may carry (binary content cannot be cut); attach "
        "a smaller resource, or leave it for a tool to read"
    )


def test_a_resource_embedded_in_a_prompt_is_cut_as_an_attachment_is(tmp_path: Path) -> None:
    bulky = {"bulky": {"command": sys.executable, "args": [str(SERVERS / "bulky.py")]}}
    kept = ("abcdefghijklmnopqrstuvwxyz" * 40)[:1000]
    note = (
        "\n[Attachment truncated: 99,000 of 100,000 characters of text://100000 were cut. If you need the "
        "rest, read it in smaller parts, with a tool or a narrower resource of its server.]"
    )
    agents = {"default": {"tool_calling": False, "max_result_chars": 1000}}
    with (
        ScriptedModelServer([Turn.text("Read.")]) as model,
        serve_in_thread(tmp_path, model, mcp_servers=bulky, agents=agents) as server,
    ):
        http = server.http()
        chat = http.post("/api/chats", json={"agent": "default"}).json()
        path = f"/api/chats/{chat['id']}/messages"
        with EventReader(http, chat["id"]) as events:
            quoted = http.post(path, json={"prompt": {"name": "quote", "arguments": {"chars": "100000"}}})
            assert quoted.status_code == 202, quoted.text
            events.until("final")
        messages: list[dict[str, Any]] = http.get(path).json()

    [stored] = [attachment for message in messages for attachment in message.get("attachments") or []]
    assert stored["uri"] == "text://100000"
    assert (len(stored["text"]), stored["text"][-300:]) == (len(kept + note), (kept + note)[-300:])
