"""Host and Origin checks (DNS rebinding, other sites' pages), the bearer token, body size limits, and
refusing to listen beyond this machine without a token."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from server_helpers import (
    EVENT_TIMEOUT,
    EventReader,
    free_port,
    serve_in_thread,
    start_process,
    toolbridge_command,
    write_config,
)

from toolbridge.errors import ConfigError
from toolbridge.server import ServerSettings

TOKEN = "s3cret-token"
STRONG_TOKEN = "Vq3xL9-kP2mZ7rT4wY8n"


def test_host_and_origin_must_be_this_server(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None) as server:
        http = server.http()
        rebound = http.get("/api/agents", headers={"Host": f"attacker.example:{server.port}"})
        wrong_port = http.get("/api/agents", headers={"Host": "127.0.0.1:1"})
        by_name = http.get("/api/agents", headers={"Host": f"localhost:{server.port}"})
        by_ipv6 = http.get("/api/agents", headers={"Host": f"[::1]:{server.port}"})
        other_site = http.post("/api/chats", json={}, headers={"Origin": "https://attacker.example"})
        null_origin = http.post("/api/chats", json={}, headers={"Origin": "null"})
        own_page = http.post("/api/chats", json={}, headers={"Origin": f"http://localhost:{server.port}"})

    assert rebound.status_code == 403
    assert rebound.json()["error"]["type"] == "permission_error"
    assert "Host 'attacker.example:" in rebound.json()["error"]["message"]
    assert wrong_port.status_code == 403
    assert by_name.status_code == by_ipv6.status_code == 200
    assert other_site.status_code == null_origin.status_code == 403
    assert "https://attacker.example" in other_site.json()["error"]["message"]
    assert own_page.status_code == 201


def _status_line(port: int, *request: bytes) -> bytes:
    """The status line the server answers `request` (sent piece by piece on a raw socket) with; b"" if
    it closed the connection without one, even before all was sent."""
    with socket.create_connection(("127.0.0.1", port), timeout=EVENT_TIMEOUT) as raw:
        try:
            for piece in request:
                raw.sendall(piece)
            return raw.makefile("rb").readline()
        except (BrokenPipeError, ConnectionResetError):
            return b""


def test_a_request_with_two_hosts_is_refused(tmp_path: Path) -> None:
    """Whichever comes first: a proxy or cache in front may act on the other one."""
    with serve_in_thread(tmp_path, None) as server:
        own = f"Host: 127.0.0.1:{server.port}\r\n"
        for hosts in (own + "Host: attacker.example\r\n", "Host: attacker.example\r\n" + own, own + own):
            status = _status_line(server.port, f"GET /api/agents HTTP/1.1\r\n{hosts}\r\n".encode())
            assert status.startswith(b"HTTP/1.1 400"), hosts
        assert _status_line(server.port, f"GET /api/agents HTTP/1.1\r\n{own}\r\n".encode()).startswith(
            b"HTTP/1.1 200"
        )


def test_request_headers_are_bounded(tmp_path: Path) -> None:
    """A head over 64 KiB is refused (431, or the connection closed): it is not held in memory, however
    long, and without a key (the refusal comes before the key is looked at)."""
    with serve_in_thread(tmp_path, None, token=TOKEN) as server:
        start = f"GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode()
        key = f"Authorization: Bearer {TOKEN}\r\n".encode()
        whole = _status_line(server.port, start + b"X-Big: " + b"x" * 100_000 + b"\r\n\r\n")
        endless = _status_line(server.port, start, b"X-Big: ", *[b"x" * 16_384] * 64, b"\r\n\r\n")
        many = _status_line(server.port, start, *[b"X-Many: %d\r\n" % n for n in range(10_000)], b"\r\n")
        within = _status_line(server.port, start + key + b"X-Big: " + b"x" * 60_000 + b"\r\n\r\n")
        # On a kept-alive connection, the next request's head is counted afresh.
        with socket.create_connection(("127.0.0.1", server.port), timeout=EVENT_TIMEOUT) as raw:
            raw.sendall(start + key + b"X-Big: " + b"x" * 40_000 + b"\r\n\r\n")
            replies = raw.makefile("rb")
            first = replies.readline()
            head = list(iter(replies.readline, b"\r\n"))
            length = next(line.split(b":")[1] for line in head if line.lower().startswith(b"content-length"))
            replies.read(int(length))
            raw.sendall(start + key + b"X-Big: " + b"x" * 40_000 + b"\r\n\r\n")
            second = replies.readline()

    assert whole in (b"", b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert endless in (b"", b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert many in (b"", b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert within.startswith(b"HTTP/1.1 200")
    assert first.startswith(b"HTTP/1.1 200")
    assert second.startswith(b"HTTP/1.1 200")


def test_allowed_hosts_from_the_config(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None, server={"allowed_hosts": ["toolbridge.lan"]}) as server:
        response = server.http().get("/api/agents", headers={"Host": f"toolbridge.lan:{server.port}"})
    assert response.status_code == 200


def test_token_is_required_and_accepted(tmp_path: Path) -> None:
    with serve_in_thread(tmp_path, None, token=TOKEN) as server:
        anonymous = server.http()
        anonymous.headers.pop("Authorization")
        missing = anonymous.get("/api/chats")
        wrong = anonymous.get("/v1/models", headers={"Authorization": "Bearer guess"})
        page = anonymous.get("/")  # the page's files hold no data; its API calls carry the token
        right = server.http().get("/api/chats")
        models = server.openai().models.list()
        with pytest.raises(openai.AuthenticationError) as refused:
            openai.OpenAI(base_url=f"{server.url}/v1", api_key="guess", max_retries=0).models.list()
        chat_id = server.http().post("/api/chats", json={}).json()["id"]
        with EventReader(anonymous, chat_id, query=f"?token={TOKEN}") as events:
            assert events.response.status_code == 200
        sse_without = anonymous.get(f"/api/chats/{chat_id}/events")

    assert missing.status_code == wrong.status_code == sse_without.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer <token>" in missing.json()["error"]["message"]
    assert TOKEN not in missing.text
    assert page.status_code == 200
    assert right.status_code == 200
    assert [m.id for m in models.data] == ["default"]
    assert refused.value.status_code == 401


def test_bodies_over_the_limit_are_refused_even_without_content_length(tmp_path: Path) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"content": "'
        for _ in range(40):
            yield b"x" * 1024
        yield b'"}'

    with serve_in_thread(tmp_path, None, server={"max_body_bytes": 16_384}) as server:
        http = server.http()
        chat_id = http.post("/api/chats", json={}).json()["id"]
        chunked = http.post(f"/api/chats/{chat_id}/messages", content=chunks())
        messages = http.get(f"/api/chats/{chat_id}/messages").json()

    assert "content-length" not in chunked.request.headers
    assert chunked.status_code == 413
    assert "larger than 16,384 bytes" in chunked.json()["error"]["message"]
    assert messages == []


@pytest.mark.slow
def test_a_caller_without_the_key_is_refused_before_its_body_is_read(tmp_path: Path) -> None:
    """401, not 413: nobody without a key can make the server read (and hold) a body."""

    def chunks() -> Iterator[bytes]:
        for _ in range(40):
            yield b"x" * 1024

    config = write_config(tmp_path, None, server={"max_body_bytes": 16_384})
    serving = start_process(config, f"sqlite:///{tmp_path / 'db.sqlite'}", token=TOKEN)
    try:
        anonymous = serving.server.http()
        anonymous.headers.pop("Authorization")
        chunked = anonymous.post("/api/chats/1/messages", content=chunks())
        declared = anonymous.post("/api/chats/1/messages", content=b"x" * 20_000)
        keyed = serving.server.http().post("/api/chats/1/messages", content=chunks())
        # A body that never ends: answered at once all the same, since none of it is waited for.
        with socket.create_connection(("127.0.0.1", serving.server.port), timeout=EVENT_TIMEOUT) as raw:
            raw.sendall(
                f"POST /api/chats/1/messages HTTP/1.1\r\nHost: 127.0.0.1:{serving.server.port}\r\n"
                "Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
                '5\r\n{"a":\r\n'.encode()
            )
            status_line = raw.makefile("rb").readline()  # a socket timeout here: the body was waited for
    finally:
        serving.stop()

    assert "content-length" not in chunked.request.headers
    assert chunked.status_code == declared.status_code == 401
    assert "Authorization: Bearer <token>" in chunked.json()["error"]["message"]
    assert keyed.status_code == 413
    assert status_line.startswith(b"HTTP/1.1 401")


@pytest.mark.slow
def test_refuses_to_listen_beyond_this_machine_without_a_token(tmp_path: Path) -> None:
    config = write_config(tmp_path, None)
    env = {**os.environ, "TOOLBRIDGE_TOKEN": ""}
    args = ["serve", "--host", "0.0.0.0", "--port", str(free_port()), "--config", str(config)]
    args += ["--db", f"sqlite:///{tmp_path / 'db.sqlite'}"]
    refused = subprocess.run(toolbridge_command(*args), capture_output=True, text=True, env=env, timeout=60)

    assert refused.returncode == 1
    assert "refusing to listen on 0.0.0.0 without a token" in refused.stderr
    assert "--token" in refused.stderr
    # With a strong token it may; loopback needs none.
    ServerSettings(host="0.0.0.0", token=STRONG_TOKEN).check_bind()
    ServerSettings(host="::1").check_bind()
    with pytest.raises(ConfigError):
        ServerSettings(host="192.168.1.20").check_bind()


@pytest.mark.parametrize("weak", ["x", TOKEN, "a" * 40, "abababab" * 4])
@pytest.mark.parametrize("has_users", [False, True])
def test_beyond_this_machine_a_short_or_weak_token_is_refused(weak: str, has_users: bool) -> None:
    with pytest.raises(ConfigError, match=r"at least 16 characters.*secrets\.token_urlsafe"):
        ServerSettings(host="0.0.0.0", token=weak).check_bind(has_users=has_users)
    ServerSettings(host="127.0.0.1", token=weak).check_bind(has_users=has_users)  # this machine only


def test_an_app_made_for_beyond_this_machine_without_a_token_or_users_lets_nobody_in(
    tmp_path: Path,
) -> None:
    """`toolbridge serve` refuses to start so; an app made with `create_app` alone refuses every request."""
    with serve_in_thread(tmp_path, None, server={"host": "0.0.0.0"}) as server:
        refused = server.http().get("/api/chats")
    assert refused.status_code == 401
    assert "neither a token nor users" in refused.json()["error"]["message"]


def test_the_token_in_the_query_is_accepted_only_on_the_event_stream(tmp_path: Path) -> None:
    """URLs end up in logs and browser history: only `EventSource`'s endpoint may carry the token there."""
    with serve_in_thread(tmp_path, None, token=TOKEN) as server:
        chat_id = server.http().post("/api/chats", json={}).json()["id"]
        anonymous = server.http()
        anonymous.headers.pop("Authorization")
        query = {"token": TOKEN}
        refused = {
            "GET /api/chats": anonymous.get("/api/chats", params=query),
            "GET /api/agents": anonymous.get("/api/agents", params=query),
            "GET /api/stats": anonymous.get("/api/stats", params=query),
            "GET /api/servers": anonymous.get("/api/servers", params=query),
            "GET messages": anonymous.get(f"/api/chats/{chat_id}/messages", params=query),
            "POST /api/chats": anonymous.post("/api/chats", params=query, json={}),
            "POST cancel": anonymous.post(f"/api/chats/{chat_id}/cancel", params=query),
            "GET /v1/models": anonymous.get("/v1/models", params=query),
            "events/ (trailing path)": anonymous.get(f"/api/chats/{chat_id}/events/x", params=query),
        }
        with EventReader(anonymous, chat_id, query=f"?token={TOKEN}") as events:
            stream_status = events.response.status_code
        chats_after = server.http().get("/api/chats").json()

    assert {name: r.status_code for name, r in refused.items()} == dict.fromkeys(refused, 401)
    message = refused["GET /api/chats"].json()["error"]["message"]
    assert "?token= is accepted only on /api/chats/{id}/events" in message
    assert TOKEN not in message
    assert stream_status == 200
    assert [chat["id"] for chat in chats_after] == [chat_id]  # the refused POST created nothing
