"""ServerConnection over real streamable HTTP and SSE on 127.0.0.1, to tests/servers/basic.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.errors import ServerStartError
from toolbridge.mcp import ServerConnection
from toolbridge.types import ImagePart, TextPart

pytestmark = pytest.mark.anyio


@dataclass
class Remote:
    server: ServerConnection
    tools_changed: anyio.Event


@pytest.fixture(scope="module")
async def remote(basic_http_server) -> AsyncIterator[Remote]:
    """One connection per HTTP transport, shared by this module's tests."""
    tools_changed = anyio.Event()
    config = basic_http_server.config("remote")
    async with ServerConnection(config, on_tools_changed=lambda name: tools_changed.set()) as connection:
        yield Remote(connection, tools_changed)


async def test_tools_and_calls_work_over_http_and_the_session_is_kept(remote: Remote) -> None:
    tools = {tool.name: tool for tool in await remote.server.list_tools()}
    assert tools["echo"].annotations.read_only_hint is True
    assert tools["echo"].source == "remote"

    pids = {(await remote.server.call_tool("pid", {}, call_id=f"p{i}")).text for i in range(3)}
    echo = await remote.server.call_tool("echo", {"text": "über http"}, call_id="e")
    media = await remote.server.call_tool("media", {}, call_id="m")

    assert len(pids) == 1
    assert echo.content == [TextPart(text="über http")]
    assert isinstance(media.content[1], ImagePart)
    assert media.structured_content == {"kinds": 6}
    assert remote.server.state == "connected"


async def test_a_timed_out_call_is_cancelled_at_the_http_server(remote: Remote) -> None:
    result = await remote.server.call_tool("sleep", {"ms": 30_000, "tag": "http"}, call_id="s", timeout=0.3)
    cancelled = await remote.server.call_tool("was_cancelled", {"tag": "http"}, call_id="w")
    assert (result.is_error, result.error_kind) == (True, "timeout")
    assert "did not answer within 0.3 s" in result.text
    assert cancelled.text == "true"


async def test_concurrent_calls_share_the_session(remote: Remote) -> None:
    texts: list[str] = []

    async def call(i: int) -> None:
        texts.append((await remote.server.call_tool("echo", {"text": str(i)}, call_id=f"c{i}")).text)

    async with anyio.create_task_group() as group:
        for i in range(10):
            group.start_soon(call, i)
    assert sorted(texts, key=int) == [str(i) for i in range(10)]


@pytest.mark.slow
async def test_concurrent_calls_run_at_the_same_time_over_http(http_server) -> None:
    # Each call waits in the server until all three run. The SDK's OAuth client (on for every HTTP
    # server that sends no credentials of its own) held a lock per request until its answer: calls
    # queued, and none met the others.
    server = http_server("basic", "streamable-http")
    texts: list[str] = []
    async with ServerConnection(server.config("meeting")) as connection:

        async def meet(tag: str) -> None:
            arguments = {"tag": tag, "peers": 3}
            texts.append((await connection.call_tool("rendezvous", arguments, call_id=tag)).text)

        async with anyio.create_task_group() as group:
            for tag in ("a", "b", "c"):
                group.start_soon(meet, tag)
    assert sorted(texts) == [f"{tag} met its peers" for tag in ("a", "b", "c")]


async def test_list_changed_reaches_the_client_over_http(remote: Remote) -> None:
    await remote.server.list_tools()
    await remote.server.call_tool("add_tool", {"name": "http_late_tool"}, call_id="a")
    with anyio.fail_after(5):
        await remote.tools_changed.wait()
    assert "http_late_tool" in {tool.name for tool in await remote.server.list_tools()}


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_an_http_server_that_dies_is_reconnected_once_it_is_back(http_server, transport: str) -> None:
    server = http_server("basic", transport)
    async with ServerConnection(server.config("remote", connect_timeout=5)) as connection:
        first_pid = (await connection.call_tool("pid", {}, call_id="p1")).text
        lost = await connection.call_tool("crash", {"code": 1}, call_id="c")
        assert (lost.is_error, lost.error_kind) == (True, "server_unavailable")
        assert "was lost during the call to 'crash'" in lost.text
        assert "Restarting the server failed" in lost.text, "nothing listens any more"
        assert "may or may not have run" in lost.text
        assert connection.state == "failed"

        http_server("basic", transport, port=server.port)
        back = await connection.call_tool("pid", {}, call_id="p2")
    assert not back.is_error
    assert back.text != first_pid


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
async def test_a_wrong_url_path_fails_with_a_hint_about_the_path(basic_http_server, transport: str) -> None:
    url = f"http://127.0.0.1:{basic_http_server.port}/wrong"
    config = ServerConfig(name="remote", transport=transport, url=url)  # type: ignore[arg-type]
    async with ServerConnection(config) as connection:
        with anyio.fail_after(10), pytest.raises(ServerStartError) as raised:
            await connection.connect()
    assert url in str(raised.value)
    assert "Check the URL path" in str(raised.value)
