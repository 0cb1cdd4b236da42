"""Hostile requests (issue 9): a blank token, a disguised `?token=`, tokens in log lines, and bad
requests that must be a 4xx with a message, never a 500."""

from __future__ import annotations

import io
import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from server_helpers import calculate_then_answer, read_only_database_url, serve_in_thread, write_config

from toolbridge.agent import AgentDefinition
from toolbridge.config import load_config
from toolbridge.errors import ConfigError
from toolbridge.server import settings_from_config
from toolbridge.server._redact import install_token_redaction
from toolbridge.store import SchemaDamagedError, Store
from toolbridge.testing import ScriptedModelServer

TOKEN = "s3cret-token"


@pytest.mark.parametrize("blank", ["", " ", "\t\n"])
def test_a_blank_token_is_refused_from_every_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, blank: str
) -> None:
    config = load_config(write_config(tmp_path, None))
    with pytest.raises(ConfigError, match="blank"):
        settings_from_config(config, token=blank)
    with pytest.raises(ConfigError, match="blank"):
        settings_from_config(load_config(write_config(tmp_path, None, server={"token": blank})))
    if blank:  # an empty $TOOLBRIDGE_TOKEN is the usual way to say "not set"
        monkeypatch.setenv("TOOLBRIDGE_TOKEN", blank)
        with pytest.raises(ConfigError, match="blank"):
            settings_from_config(config)


def test_the_query_token_is_matched_exactly_and_only_on_the_event_stream(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None, token=TOKEN) as server:
        chat_id = server.http().post("/api/chats", json={}).json()["id"]
        anonymous = server.http()
        anonymous.headers.pop("Authorization")
        on_other_endpoint = anonymous.get(f"/api/chats?token={TOKEN}")
        disguised = anonymous.get(f"/api/chats/{chat_id}/events?%74oken={TOKEN}")
        padded = anonymous.get(f"/api/chats/{chat_id}/events?token=%20{TOKEN}")
        with anonymous.stream("GET", f"/api/chats/{chat_id}/events?token={TOKEN}") as exact:
            exact_status = exact.status_code

    assert on_other_endpoint.status_code == 401
    assert "only on /api/chats/{id}/events" in on_other_endpoint.json()["error"]["message"]
    assert disguised.status_code == padded.status_code == 401
    assert exact_status == 200


@pytest.fixture
def access_log() -> Iterator[io.StringIO]:
    logger = logging.getLogger("uvicorn.access")
    output = io.StringIO()
    handler = logging.StreamHandler(output)
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield output
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)


def test_the_token_is_redacted_from_log_lines_in_any_encoding(access_log: io.StringIO) -> None:
    install_token_redaction(TOKEN)
    logger = logging.getLogger("uvicorn.access")
    for path in (
        f"/api/chats/1/events?token={TOKEN}",
        f"/api/chats/1/events?%74oken={TOKEN}",
        f"/api/chats/1/events?x=1&TOKEN%3D{TOKEN}",
        "/api/chats/1/events?token=" + "".join(f"%{ord(c):02X}" for c in TOKEN),
        f"/api/chats?q={TOKEN}",
    ):
        logger.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", path, "1.1", 200)

    lines = access_log.getvalue().splitlines()
    assert len(lines) == 5
    assert all("***" in line for line in lines)
    assert TOKEN not in access_log.getvalue()
    assert "s3cret" not in access_log.getvalue()
    assert "%73%33" not in access_log.getvalue()


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_access_log_lines_with_a_token_are_still_written_as_verbose_formats_them(
    access_log: io.StringIO, log_format: str
) -> None:
    """`toolbridge serve --verbose` logs each request with uvicorn's access formatter, which reads the
    request line from the record's arguments: redaction must leave them in place."""
    from uvicorn.logging import AccessFormatter

    from toolbridge.telemetry import JsonLogFormatter

    (handler,) = [h for h in logging.getLogger("uvicorn.access").handlers if h.stream is access_log]  # type: ignore[attr-defined]
    handler.setFormatter(
        AccessFormatter('%(client_addr)s - "%(request_line)s" %(status_code)s', use_colors=False)
        if log_format == "text"
        else JsonLogFormatter()
    )
    install_token_redaction(TOKEN)
    key = "tbk_0a1b2c3d_" + "s3cretPart-of_the-key" * 2
    logger = logging.getLogger("uvicorn.access")
    logger.info(
        '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", f"/api/chats/1/events?token={TOKEN}", "1.1", 200
    )
    logger.info(
        '%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", f"/api/chats/1/events?token={key}", "1.1", 200
    )

    written = access_log.getvalue()
    assert written.count("/api/chats/1/events?token=***") == 2, written
    assert "200" in written
    assert "s3cret" not in written


def _assert_refused(response: httpx.Response, status: int = 400) -> str:
    assert response.status_code == status, response.text
    message: str = response.json()["error"]["message"]
    assert message
    return message


def test_bad_requests_are_4xx_with_a_message(tmp_path: Path) -> None:
    user = {"role": "user", "content": "hi"}
    with serve_in_thread(tmp_path, None) as server:
        http = server.http()
        surrogate_title = http.post(
            "/api/chats",
            content=b'{"title": "bad \\ud800 title"}',
            headers={"Content-Type": "application/json"},
        )
        deep = http.post("/api/chats", content=b"[" * 100_000 + b"]" * 100_000)
        deep_v1 = http.post(
            "/v1/chat/completions", content=b'{"model": "default", "messages": ' + b"[" * 100_000
        )
        string_function = http.post(
            "/v1/chat/completions",
            json={
                "model": "default",
                "messages": [
                    {"role": "assistant", "tool_calls": [{"id": "c1", "function": "calculate"}]},
                    user,
                ],
            },
        )
        numeric_id = http.post(
            "/v1/chat/completions",
            json={
                "model": "default",
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": 7, "function": {"name": "calculate", "arguments": "{}"}}],
                    },
                    {"role": "tool", "tool_call_id": 7, "content": "42"},
                    user,
                ],
            },
        )
        huge_chat = http.get(f"/api/chats/{10**23}/messages")
        huge_chat_post = http.post(f"/api/chats/{10**23}/messages", json={"content": "hi"})
        huge_limit = http.get(f"/api/chats?limit={10**20}")
        negative_limit = http.get("/api/chats?limit=-5")
        far_since = http.get("/api/stats?since=99999999999d")

    assert "surrogate" in _assert_refused(surrogate_title)
    assert "nested" in _assert_refused(deep)
    assert "nested" in _assert_refused(deep_v1)
    assert "function" in _assert_refused(string_function)
    _assert_refused(numeric_id)
    assert "chat_id" in _assert_refused(huge_chat)
    assert "chat_id" in _assert_refused(huge_chat_post)
    assert "limit" in _assert_refused(huge_limit)
    assert "limit" in _assert_refused(negative_limit)
    assert "before the year 1" in _assert_refused(far_since)


def test_an_invalid_stored_agent_is_reported_and_the_rest_listed(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'toolbridge.db'}") as store:
        store.create_agent(AgentDefinition(name="helper"))
        store.create_agent(AgentDefinition(name="broken"))
    with sqlite3.connect(tmp_path / "toolbridge.db") as db:  # as another version or a hand edit leaves it
        db.execute("UPDATE agents SET definition = '{\"max_steps\": \"lots\"}' WHERE name = 'broken'")

    with serve_in_thread(tmp_path, None) as server:
        http = server.http()
        agents = http.get("/api/agents")
        models = http.get("/v1/models")
        chat_with_broken = http.post("/api/chats", json={"agent": "broken"})

    assert agents.status_code == models.status_code == 200
    listed = {agent["name"]: agent["problem"] for agent in agents.json()}
    assert listed["helper"] is None
    assert "max_steps" in listed["broken"]
    assert [model["id"] for model in models.json()["data"]] == ["default", "helper"]
    assert models.json()["invalid_agents"][0]["id"] == "broken"
    assert "max_steps" in _assert_refused(chat_with_broken, 422)


def test_a_dropped_table_is_reported_as_a_damaged_schema(tmp_path: Path) -> None:
    database = tmp_path / "toolbridge.db"
    with serve_in_thread(tmp_path, None) as server:
        http = server.http()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        with sqlite3.connect(database) as db:  # dropped while the server runs
            db.execute("DROP TABLE messages")
        messages = http.get(f"/api/chats/{chat_id}/messages")
        chats = http.get("/api/chats")

    for response in (messages, chats):
        assert response.status_code == 503, response.text
        assert "the database schema is damaged" in response.json()["error"]["message"]
        assert "Traceback" not in response.text
    with pytest.raises(SchemaDamagedError, match=r"damaged .*table 'messages' is missing"):
        Store(f"sqlite:///{database}")  # and when it is opened again


@pytest.fixture
def read_only_database() -> str:
    return read_only_database_url("read_only_store")


def test_an_answer_is_returned_when_the_store_cannot_be_written(
    tmp_path: Path, read_only_database: str, caplog: pytest.LogCaptureFixture
) -> None:
    turns = [*calculate_then_answer(), *calculate_then_answer()]
    question = [{"role": "user", "content": "What is 15 + 27?"}]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, db_url=read_only_database) as server,
        caplog.at_level(logging.ERROR, logger="toolbridge.store"),
    ):
        healthy = server.http().get("/api/health").json()
        answers = [
            server.openai().chat.completions.create(model="default", messages=question)  # type: ignore[arg-type]
            for _ in range(2)
        ]
        degraded = server.http().get("/api/health").json()

    assert healthy["store"]["state"] == "ok"
    assert [answer.choices[0].message.content for answer in answers] == ["The answer is 42."] * 2
    assert degraded["store"]["state"] == "degraded"
    assert "read-only transaction" in degraded["store"]["error"]
    assert "INSERT" not in degraded["store"]["error"].partition("transaction")[2]  # no SQL, no parameters
    failures = [record for record in caplog.records if "cannot write to the database" in record.getMessage()]
    assert len(failures) == 1  # once per outage, not per call
