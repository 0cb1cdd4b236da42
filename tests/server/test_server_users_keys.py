"""Users and keys through the real API: users and keys made with the CLI, every request needing a key
once a user exists (the token still working as an admin), revoked keys refused, each user seeing only
their own chats and call log (admins everything), and the OpenAI endpoint taking a key as its api_key."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from urllib.parse import quote

import httpx
import openai
import pytest
from server_helpers import EventReader, serve_in_thread
from users_helpers import add_user, bearer, cli, cli_json

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

TOKEN = "the-one-person-token"
CAREFUL = {"default": {"approval": {"tools": {"calculate": "always"}}}}


def spellings_of(chat_id: int) -> list[str]:
    """Other ways to write `chat_id` that FastAPI's int parsing reads as the same number, each once
    enough for another user to reach the chat (the check looked at the text, not the number)."""
    n = str(chat_id)
    return [f"+{n}", f"{n}.0", f" {n}", f"{n} ", f"{n}\n", f"{n}\t", f"{n}\r", f"+0{n}", f"0{n}", f"0_{n}"]


def db_of(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'toolbridge.db'}"


def test_the_cli_adds_lists_and_removes_users_and_keys_stored_hashed(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    key = add_user(db, "alice", admin=True, label="laptop")
    assert key.startswith("tbk_")
    assert len(key) > 40
    users = cli_json(db, "users", "list")
    assert [(u["name"], u["admin"], u["keys"]) for u in users] == [("alice", True, 1)]
    keys = cli_json(db, "access-keys", "list")
    assert [(k["prefix"], k["label"], k["user"], k["last_used_at"]) for k in keys] == [
        (key.split("_")[1], "laptop", "alice", None)
    ]
    # Only the hash is stored: the key's secret is nowhere in the database file.
    assert key.split("_", 2)[2].encode() not in (tmp_path / "toolbridge.db").read_bytes()
    assert "Revoked key" in cli(db, "access-keys", "revoke", keys[0]["prefix"])
    assert cli_json(db, "access-keys", "list")[0]["revoked_at"] is not None
    assert cli_json(db, "users", "list")[0]["keys"] == 0
    cli(db, "users", "remove", "alice")
    assert cli_json(db, "users", "list") == []


def test_with_a_user_every_request_needs_a_live_key(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    with (
        ScriptedModelServer([Turn.text("Hello, alice.")]) as model,
        serve_in_thread(tmp_path, model) as server,
    ):
        anonymous = server.http()
        assert anonymous.get("/api/chats").status_code == 200  # no users yet: this machine only, open
        key = add_user(db, "alice", label="script")

        missing = anonymous.get("/api/chats")
        assert missing.status_code == 401
        assert "toolbridge access-keys create" in missing.json()["error"]["message"]
        wrong = key[:-4] + "AAAA"
        assert anonymous.get("/api/chats", headers=bearer(wrong)).status_code == 401
        assert anonymous.get("/api/chats", headers=bearer("tbk_nonsense")).status_code == 401
        assert anonymous.get("/", headers={}).status_code == 200  # the page's files hold no data

        assert anonymous.get("/api/chats", headers=bearer(key)).status_code == 200
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)
        answer = client.chat.completions.create(model="default", messages=[{"role": "user", "content": "Hi"}])
        assert answer.choices[0].message.content == "Hello, alice."
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-wrong", max_retries=0).models.list()
        assert cli_json(db, "access-keys", "list")[0]["last_used_at"] is not None

        prefix = key.split("_")[1]
        cli(db, "access-keys", "revoke", prefix)
        revoked = anonymous.get("/api/chats", headers=bearer(key))
        assert revoked.status_code == 401
        assert "revoked" in revoked.json()["error"]["message"]


def test_removing_the_last_user_leaves_keys_required_until_a_restart(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    add_user(db, "early")  # there before the server starts, removed before its first request
    with serve_in_thread(tmp_path, None) as server:
        cli(db, "users", "remove", "early")
        anonymous = server.http()
        refused = anonymous.get("/api/chats")
        assert refused.status_code == 401
        assert "restart" in refused.json()["error"]["message"]

    with serve_in_thread(tmp_path, None) as server:
        anonymous = server.http()
        assert anonymous.get("/api/chats").status_code == 200  # a fresh start with no users: loopback, open
        key = add_user(db, "alice")
        assert anonymous.get("/api/chats").status_code == 401
        assert anonymous.get("/api/chats", headers=bearer(key)).status_code == 200
        cli(db, "users", "remove", "alice")
        for headers in ({}, bearer(key)):
            refused = anonymous.get("/api/chats", headers=headers)
            assert refused.status_code == 401
            assert "no users are left" in refused.json()["error"]["message"]
        assert anonymous.get("/api/stats").status_code == 401
        assert anonymous.get("/metrics").status_code == 401


def test_a_key_is_accepted_when_its_last_use_cannot_be_written(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """`last_used_at` is written on the side: a database that cannot be written (a full disk, a
    read-only file or role) still lets keys in, and answers come back."""
    key = add_user(db_of(tmp_path), "alice")
    read_only = f"sqlite:///file:{tmp_path / 'toolbridge.db'}?mode=ro&uri=true"
    question = [{"role": "user", "content": "Hi"}]
    with (
        ScriptedModelServer([Turn.text("Hello, alice."), Turn.text("Hello again.")]) as model,
        serve_in_thread(tmp_path, model, db_url=read_only) as server,
        caplog.at_level(logging.WARNING, logger="toolbridge"),
    ):
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)
        answers = [client.chat.completions.create(model="default", messages=question) for _ in range(2)]
        listed = server.http(headers=bearer(key)).get("/api/chats")

    assert [a.choices[0].message.content for a in answers] == ["Hello, alice.", "Hello again."]
    assert listed.status_code == 200
    assert cli_json(db_of(tmp_path), "access-keys", "list")[0]["last_used_at"] is None
    failures = [r for r in caplog.records if "cannot write to the database" in r.getMessage()]
    assert len(failures) == 1  # once per outage, not per request


def test_a_failing_store_is_a_503_in_the_apis_error_shape_not_a_bare_500(tmp_path: Path) -> None:
    key = add_user(db_of(tmp_path), "alice")
    with serve_in_thread(tmp_path, None) as server:
        anonymous = server.http()
        with sqlite3.connect(tmp_path / "toolbridge.db") as db:  # as good as a disk gone bad
            db.execute("DROP TABLE api_keys")
        answers = {
            "/api with a key": anonymous.get("/api/chats", headers=bearer(key)),
            "/v1 with a key": anonymous.get("/v1/models", headers=bearer(key)),
        }
        with sqlite3.connect(tmp_path / "toolbridge.db") as db:
            db.execute("PRAGMA foreign_keys = OFF")
            db.execute("DROP TABLE users")
        answers["/api without a key"] = anonymous.get("/api/chats")
        answers["/v1 without a key"] = anonymous.get("/v1/models")

    for where, answer in answers.items():
        assert answer.status_code == 503, (where, answer.text)
        error = answer.json()["error"]
        assert (error["type"], error["code"]) == ("api_error", "store_error"), where
        assert "the database failed" in error["message"]
        assert "Traceback" not in answer.text


def test_the_token_works_beside_users_keys_as_an_admin(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    with serve_in_thread(tmp_path, None, token=TOKEN) as server:
        anonymous = httpx.Client(base_url=server.url)
        key = add_user(db, "bob")
        bobs = anonymous.post("/api/chats", json={}, headers=bearer(key))
        assert bobs.status_code == 201
        # The token holder is an admin: sees bob's chat, may start a sign-in (none is configured: 404).
        assert [c["id"] for c in server.http().get("/api/chats").json()] == [bobs.json()["id"]]
        assert server.http().post("/api/servers/nothing/sign-in").status_code == 404
        assert anonymous.post("/api/servers/nothing/sign-in", headers=bearer(key)).status_code == 403
        assert anonymous.get("/api/chats").status_code == 401
        anonymous.close()


def test_each_user_sees_only_their_own_chats_and_calls_and_admins_see_all(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "6 * 7"}, id="call_alice")),
        Turn.text("42, alice."),
    ]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        alice = server.http(headers=bearer(add_user(db, "alice")))
        bob = server.http(headers=bearer(add_user(db, "bob")))
        admin = server.http(headers=bearer(add_user(db, "root", admin=True)))

        chat = alice.post("/api/chats", json={"title": "alice's sums"}).json()["id"]
        with EventReader(alice, chat) as events:
            assert alice.post(f"/api/chats/{chat}/messages", json={"content": "6 * 7?"}).status_code == 202
            events.until("final")

        assert [c["id"] for c in alice.get("/api/chats").json()] == [chat]
        assert bob.get("/api/chats").json() == []
        for method, path in [
            ("GET", f"/api/chats/{chat}/messages"),
            ("GET", f"/api/chats/{chat}/events"),
            ("POST", f"/api/chats/{chat}/cancel"),
        ]:
            refused = bob.request(method, path)
            assert refused.status_code == 404, (path, refused.text)
            assert f"no chat {chat}" in refused.json()["error"]["message"]
        posted = bob.post(f"/api/chats/{chat}/messages", json={"content": "mine now"})
        assert posted.status_code == 404
        assert bob.post(f"/api/chats/{chat}/approvals/call_alice", json={"approved": True}).status_code == 404

        assert [c["id"] for c in admin.get("/api/chats").json()] == [chat]
        messages = admin.get(f"/api/chats/{chat}/messages").json()
        assert messages[-1]["content"] == "42, alice."

        # The call log too: alice's stats show her call, bob's none, the admin's all.
        assert [(s["tool"], s["calls"]) for s in alice.get("/api/stats").json()] == [("calculate", 1)]
        assert bob.get("/api/stats").json() == []
        assert [s["calls"] for s in admin.get("/api/stats").json()] == [1]


BOBS_TRIES: list[tuple[str, str, dict[str, object] | None]] = [
    ("GET", "/api/chats/{chat}/messages", None),
    ("POST", "/api/chats/{chat}/messages", {"content": "mine now"}),
    ("POST", "/api/chats/{chat}/approvals/call_alice", {"approved": True}),
    ("POST", "/api/chats/{chat}/server-requests/form_1", {"action": "cancel"}),
    ("POST", "/api/chats/{chat}/cancel", None),
    ("PATCH", "/api/chats/{chat}", {"title": "bob's now"}),
    ("DELETE", "/api/chats/{chat}", None),
]


def _template(path: str) -> str:
    return (
        path.replace("{chat}", "{chat_id}")
        .replace("call_alice", "{call_id}")
        .replace("form_1", "{request_id}")
    )


def test_no_spelling_of_a_chats_id_lets_another_user_reach_it(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "6 * 7"}, id="call_alice")),
        Turn.text("42, alice."),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, agents=CAREFUL) as server,
    ):
        alice = server.http(headers=bearer(add_user(db, "alice")))
        bob = server.http(headers=bearer(add_user(db, "bob")))
        chat = alice.post("/api/chats", json={}).json()["id"]
        with EventReader(alice, chat) as events:
            alice.post(f"/api/chats/{chat}/messages", json={"content": "6 * 7?"})
            events.until("approval_requested")  # her run waits on her answer: bob must not give it
            for spelling in [str(chat), *spellings_of(chat)]:
                segment = quote(spelling, safe="")
                for method, path, body in BOBS_TRIES:
                    refused = bob.request(method, path.format(chat=segment), json=body)
                    assert refused.status_code == 404, (spelling, path, refused.text)
                    assert f"no chat {chat};" in refused.json()["error"]["message"]
                with bob.stream("GET", f"/api/chats/{segment}/events") as stream:
                    assert stream.status_code == 404, spelling
            # Every route of a chat was tried: a new one must join BOBS_TRIES.
            document = alice.get("/api/openapi.json").json()
            routes = {
                (method.upper(), path)
                for path, operations in document["paths"].items()
                if "{chat_id}" in path
                for method in operations
            }
            tried = {(method, _template(path)) for method, path, _ in BOBS_TRIES}
            assert routes == tried | {("GET", "/api/chats/{chat_id}/events")}

            # Her run still waits on her: bob's approval, cancel and message did nothing.
            assert (
                alice.post(f"/api/chats/{chat}/approvals/call_alice", json={"approved": False}).status_code
                == 204
            )
            assert events.until("final")[-1]["result"]["output"] == "42, alice."
        assert "mine now" not in str(alice.get(f"/api/chats/{chat}/messages").json())


def test_each_app_has_its_own_key_and_usage_figures(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "1 + 1"})).with_usage(10, 2),
        Turn.text("2.").with_usage(20, 3),
        Turn.text("No tools needed.").with_usage(7, 4),
    ]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        reports = add_user(db, "reports-app")
        chat = add_user(db, "chat-app")
        for key, question in [(reports, "1 + 1?"), (chat, "Hi")]:
            client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=key, max_retries=0)
            client.chat.completions.create(model="default", messages=[{"role": "user", "content": question}])
        # A tool called over plain HTTP (POST /tools/{name}) is the key's user's too.
        direct = httpx.post(
            f"{server.url}/tools/calculate", json={"expression": "2 + 2"}, headers=bearer(reports)
        )
        assert direct.status_code == 200, direct.text
    by_reports = cli_json(db, "stats", "--user", "reports-app")
    assert [(s["tool"], s["calls"], s["callers"]) for s in by_reports] == [
        ("calculate", 2, {"agent": 1, "openapi": 1})
    ]
    assert cli_json(db, "stats", "--user", "chat-app") == []
    chat_apps = cli(db, "stats", "--user", "chat-app")
    assert "chat-app: 1 runs, 7 model tokens in, 4 out" in chat_apps
    assert "No tool calls logged by chat-app." in chat_apps
    assert "reports-app: 1 runs, 30 model tokens in, 5 out" in cli(db, "stats", "--user", "reports-app")


def test_log_lines_never_show_a_keys_secret() -> None:
    from toolbridge.server._redact import TokenRedactor

    key = "tbk_0a1b2c3d_" + "s3cretPart-of_the-key" * 2
    line = f'"GET /api/chats/1/events?key={key} HTTP/1.1" Authorization: Bearer {key}'
    redacted = TokenRedactor(None).redact(line)
    assert "s3cretPart" not in redacted
    assert redacted.count("tbk_0a1b2c3d_***") == 2


def test_users_keys_also_allow_listening_beyond_this_machine() -> None:
    from toolbridge.errors import ConfigError
    from toolbridge.server import ServerSettings

    with pytest.raises(ConfigError, match="toolbridge users add"):
        ServerSettings(host="192.168.1.20").check_bind()
    ServerSettings(host="192.168.1.20").check_bind(has_users=True)
