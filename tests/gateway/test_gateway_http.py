"""`toolbridge gateway --http` as a real process, used by the official SDK client over streamable HTTP
(its default, which speaks the 2026-07-28 revision, and the legacy handshake) and over the older SSE
transport."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx2
import mcp_types as mcp
import pytest
from gateway_helpers import (
    HttpGateway,
    basic_server,
    gateway_command,
    sse_transport_client,
    start_http_gateway,
    streamable_client,
)
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from prometheus_client.parser import text_string_to_metric_families

from server_paths import test_server_path
from toolbridge.store import Store

pytestmark = pytest.mark.anyio

FULL, NARROW = "full-access-token", "echo-only-token"
GUARDED_CONFIG = {
    "mcpServers": {
        "basic": basic_server(),
        "library": {**basic_server(), "args": [test_server_path("library")]},
    },
    "gateway": {
        "max_body_bytes": 4096,
        "tokens": {
            "ci": {"token": FULL},
            "cursor": {"token": NARROW, "tools": {"allow": ["echo"]}},
        },
    },
}

ClientFactory = Callable[..., AbstractAsyncContextManager[Client]]


def _modern(url: str, **options: str) -> AbstractAsyncContextManager[Client]:
    return streamable_client(url, **options)


def _legacy(url: str, **options: str) -> AbstractAsyncContextManager[Client]:
    return streamable_client(url, mode="legacy", **options)


TRANSPORTS: dict[str, tuple[str, ClientFactory]] = {
    "streamable-http": ("mcp_url", _modern),
    "streamable-http-legacy": ("mcp_url", _legacy),
    "sse": ("sse_url", sse_transport_client),
}


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpGateway]:
    """A gateway that wants a token: `ci` may use every tool, `cursor` only echo."""
    with start_http_gateway(tmp_path_factory.mktemp("guarded"), GUARDED_CONFIG) as gateway:
        yield gateway


@pytest.fixture(params=list(TRANSPORTS))
async def full_client(request: pytest.FixtureRequest, guarded: HttpGateway) -> AsyncIterator[Client]:
    attribute, connect = TRANSPORTS[request.param]
    async with connect(getattr(guarded, attribute), token=FULL) as client:
        yield client


async def test_a_client_lists_the_tools_with_their_schemas_and_calls_them(full_client: Client) -> None:
    tools = {tool.name: tool for tool in (await full_client.list_tools()).tools}
    assert {"echo", "add", "calculate"} <= set(tools)
    assert tools["add"].input_schema["required"] == ["a", "b"]
    assert tools["weather"].output_schema is not None

    echoed = await full_client.call_tool("echo", {"text": "over http"})
    assert echoed.content == [mcp.TextContent(type="text", text="over http")]
    wrong = await full_client.call_tool("add", {"a": 1})
    assert wrong.is_error
    assert isinstance(wrong.content[0], mcp.TextContent)
    assert "'b'" in wrong.content[0].text


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_a_token_with_a_tool_set_lists_and_calls_only_those_tools(
    guarded: HttpGateway, transport: str
) -> None:
    attribute, connect = TRANSPORTS[transport]
    async with connect(getattr(guarded, attribute), token=NARROW) as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == ["echo"]
        assert not (await client.call_tool("echo", {"text": "allowed"})).is_error
        refused = await client.call_tool("add", {"a": 1, "b": 2})
    assert refused.is_error
    assert isinstance(refused.content[0], mcp.TextContent)
    assert "the token 'cursor' may not use it" in refused.content[0].text


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_a_token_with_a_tool_set_reaches_only_the_resources_and_prompts_of_its_tools_servers(
    guarded: HttpGateway, transport: str
) -> None:
    attribute, connect = TRANSPORTS[transport]
    async with connect(getattr(guarded, attribute), token=FULL) as client:
        assert "note://readme" in {resource.uri for resource in (await client.list_resources()).resources}
        assert "review" in {prompt.name for prompt in (await client.list_prompts()).prompts}
    async with connect(getattr(guarded, attribute), token=NARROW) as client:  # echo, of basic
        assert (await client.list_resources()).resources == []
        assert (await client.list_resource_templates()).resource_templates == []
        assert (await client.list_prompts()).prompts == []
        with pytest.raises(MCPError, match="No server behind this gateway has the resource 'note://readme'"):
            await client.read_resource("note://readme")
        with pytest.raises(MCPError, match=r"No prompt named 'review' behind this gateway \(prompts: none\)"):
            await client.get_prompt("review", {"code": "x"})


@pytest.mark.parametrize("path", ["/mcp", "/sse", "/messages/?session_id=0"])
def test_requests_without_the_right_token_are_refused(guarded: HttpGateway, path: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with guarded.http() as anonymous, guarded.http(token="guess") as guessing:
        missing = anonymous.post(path, json=body)
        wrong = guessing.post(path, json=body)
    for refused in (missing, wrong):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        assert "Authorization: Bearer <token>" in refused.json()["error"]["message"]
        assert FULL not in refused.text


async def test_the_sdk_client_without_a_token_is_told_what_to_send(guarded: HttpGateway) -> None:
    with pytest.raises(ExceptionGroup) as refused:
        async with streamable_client(guarded.mcp_url) as client:
            await client.list_tools()
    assert refused.group_contains(MCPError, match="Authorization: Bearer <token>")


def test_host_and_origin_must_be_this_gateway(guarded: HttpGateway) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    with guarded.http(token=FULL) as http:
        rebound = http.post("/mcp", json=body, headers={"Host": f"attacker.example:{guarded.port}"})
        other_site = http.post("/mcp", json=body, headers={"Origin": "https://attacker.example"})
        sse_rebound = http.get("/sse", headers={"Host": f"attacker.example:{guarded.port}"})
    assert rebound.status_code == other_site.status_code == sse_rebound.status_code == 403
    assert "Host 'attacker.example:" in rebound.json()["error"]["message"]
    assert "https://attacker.example" in other_site.json()["error"]["message"]


def test_two_hosts_and_oversized_headers_are_refused(guarded: HttpGateway) -> None:
    """Before the token is looked at: a second Host (400) and a head over 64 KiB (431, or closed)."""

    def status_line(request: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", guarded.port), timeout=10) as raw:
            try:
                raw.sendall(request)
                return raw.makefile("rb").readline()
            except (BrokenPipeError, ConnectionResetError):
                return b""

    start = f"GET /sse HTTP/1.1\r\nHost: 127.0.0.1:{guarded.port}\r\n".encode()
    assert status_line(start + b"Host: attacker.example\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert status_line(start + b"X-Big: " + b"x" * 200_000 + b"\r\n\r\n") in (
        b"",
        b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
    )


def test_bodies_over_the_limit_are_refused_with_413_even_without_content_length(guarded: HttpGateway) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", '
        yield b'"arguments": {"text": "' + b"x" * 8192 + b'"}}}'

    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with guarded.http(token=FULL) as http:
        declared = http.post("/mcp", content=b"x" * 5000, headers=headers)
        streamed = http.post("/mcp", content=chunks(), headers=headers)
    with guarded.http() as anonymous:  # no token: refused before the body's size matters
        declared_anonymous = anonymous.post("/mcp", content=b"x" * 5000, headers=headers)
        streamed_anonymous = anonymous.post("/mcp", content=chunks(), headers=headers)
    assert declared.status_code == streamed.status_code == 413
    assert declared_anonymous.status_code == streamed_anonymous.status_code == 401
    assert "gateway.max_body_bytes" in streamed.json()["error"]["message"]


@pytest.mark.slow
def test_listening_beyond_this_machine_without_a_token_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "toolbridge.json"
    config.write_text('{"mcpServers": {}}', encoding="utf-8")
    command = gateway_command(config, tmp_path, "--host", "0.0.0.0", "--port", "0")
    env = {**os.environ, "TOOLBRIDGE_TOKEN": ""}
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1
    assert "refusing to listen on 0.0.0.0 without a token" in done.stderr
    assert "--token" in done.stderr
    assert done.stdout == ""


@pytest.mark.slow
def test_http_options_without_http_are_a_usage_error(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "toolbridge", "gateway", "--port", "9"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 1
    assert "add --http" in done.stderr


@pytest.mark.slow
def test_a_busy_port_is_named_with_the_command_to_try_instead(tmp_path: Path) -> None:
    config = tmp_path / "toolbridge.json"
    config.write_text('{"mcpServers": {}}', encoding="utf-8")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        command = gateway_command(config, tmp_path, "--port", str(port))
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert f"toolbridge gateway --http --port {port + 1}" in done.stderr


@pytest.mark.slow
async def test_calls_over_http_are_in_the_call_log_once_the_gateway_has_stopped(tmp_path: Path) -> None:
    with start_http_gateway(tmp_path, {"mcpServers": {"basic": basic_server()}}) as gateway:
        async with streamable_client(gateway.mcp_url) as client:
            for text in ("one", "two"):
                assert not (await client.call_tool("echo", {"text": text})).is_error
            assert (await client.call_tool("add", {"a": 1})).is_error

    with Store(f"sqlite:///{tmp_path / 'calls.db'}") as store:
        stats = {row.tool: row for row in store.tool_stats()}
    assert stats["echo"].calls == 2
    assert stats["add"].failed == 1


@pytest.mark.slow
async def test_a_session_opened_with_one_token_cannot_be_used_with_another(guarded: HttpGateway) -> None:
    opened: list[str] = []

    async def note_session(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            opened.append(response.headers["mcp-session-id"])

    owner = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {FULL}"}, event_hooks={"response": [note_session]}
    )
    async with (
        owner,
        Client(streamable_http_client(guarded.mcp_url, http_client=owner), mode="legacy") as client,
    ):
        assert (await client.list_tools()).tools
        # Another token holder who learnt the session id sends every request within that session.
        borrowed = {"Authorization": f"Bearer {NARROW}", "mcp-session-id": opened[0]}
        async with httpx2.AsyncClient(headers=borrowed) as intruder:
            with pytest.raises(ExceptionGroup) as refused:
                async with Client(
                    streamable_http_client(guarded.mcp_url, http_client=intruder, terminate_on_close=False),
                    mode="legacy",
                ) as hijacked:
                    await hijacked.list_tools()
        assert refused.group_contains(MCPError, match="Session not found")
        assert (await client.list_tools()).tools, "the owner's session is untouched"


@pytest.mark.slow
async def test_metrics_are_for_a_token_that_reaches_every_tool(guarded: HttpGateway) -> None:
    async with streamable_client(guarded.mcp_url, token=FULL) as client:
        assert not (await client.call_tool("echo", {"text": "counted"})).is_error
    with guarded.http(FULL) as full, guarded.http(NARROW) as narrow, guarded.http() as anonymous:
        counted = full.get("/metrics")
        refused, unknown = narrow.get("/metrics"), anonymous.get("/metrics")
    assert counted.status_code == 200
    calls = [
        sample
        for family in text_string_to_metric_families(counted.text)
        for sample in family.samples
        if sample.name == "toolbridge_tool_calls_total"
    ]
    assert {"tool": "echo", "server": "basic", "outcome": "ok"} in [sample.labels for sample in calls]
    # Its labels name every tool: not for a token that reaches only echo, nor for no token at all.
    assert (refused.status_code, unknown.status_code) == (403, 401)
    assert "reaches every tool" in refused.text


def test_header_values_are_read_without_the_white_space_around_them(guarded: HttpGateway) -> None:
    """RFC 9110: the spaces around a value are no part of it. The server's HTTP parser keeps them, and
    `Mcp-Name:   echo  ` was refused as not naming the tool of the body (conformance http-header-validation).
    Sent over a raw socket: HTTP client libraries will not send such a header."""
    revision = "2026-07-28"
    meta = {
        "io.modelcontextprotocol/protocolVersion": revision,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "echo", "arguments": {"text": "hi"}, "_meta": meta}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{guarded.port}\r\nAuthorization: Bearer {FULL}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {revision}\r\nMcp-Method:  tools/call \r\nMcp-Name:   echo  \r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", guarded.port), timeout=10) as raw:
        raw.sendall(head.encode() + body)
        answer = raw.makefile("rb").read().decode()
    assert answer.startswith("HTTP/1.1 200"), answer
    assert '"text":"hi"' in answer.replace(" ", "")


def test_a_call_stream_opens_with_a_priming_event_and_says_when_to_reconnect(guarded: HttpGateway) -> None:
    """SEP-1699 (2025-11-25 sessions): the first SSE event has an id and no data, so a client whose stream
    breaks can resume it with `Last-Event-ID`; `retry` says how long to wait first."""
    revision = "2025-11-25"
    accept = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": revision}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": revision,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    with guarded.http(FULL) as http:
        opened = http.post("/mcp", json=hello, headers=accept)
        assert opened.status_code == 200, opened.text
        session = {**accept, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "hi"}},
        }
        stream = http.post("/mcp", json=call, headers=session).text
    first_event = stream.replace("\r\n", "\n").split("\n\n", 1)[0].splitlines()
    assert any(line.startswith("id:") for line in first_event), stream
    assert not any(line.startswith("data:") and line[5:].strip() for line in first_event), stream
    assert any(line.startswith("retry:") for line in stream.splitlines()), stream
    assert '"hi"' in stream
