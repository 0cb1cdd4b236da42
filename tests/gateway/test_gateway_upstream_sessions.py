"""Upstream sessions behind `toolbridge gateway --http`: one per server for every client by default, one
per client session for a server configured `"shared": false`, closed when that client's session ends.

basic.py's `pid` tool tells which process (so which upstream session) answered.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import mcp_types as mcp
import pytest
from gateway_helpers import (
    HttpGateway,
    basic_server,
    is_running,
    sse_transport_client,
    start_http_gateway,
    streamable_client,
)
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

CONFIG = {"mcpServers": {"common": basic_server(), "own": basic_server(shared=False)}}


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpGateway]:
    with start_http_gateway(tmp_path_factory.mktemp("sessions"), CONFIG) as running:
        yield running


async def _pid(client: Client, server: str) -> int:
    result = await client.call_tool(f"{server}__pid", {})
    assert not result.is_error, result.content
    assert isinstance(result.content[0], mcp.TextContent)
    return int(result.content[0].text)


def _legacy_streamable(gateway: HttpGateway) -> AbstractAsyncContextManager[Client]:
    return streamable_client(gateway.mcp_url, mode="legacy")


def _sse(gateway: HttpGateway) -> AbstractAsyncContextManager[Client]:
    return sse_transport_client(gateway.sse_url)


SESSION_TRANSPORTS: dict[str, Callable[[HttpGateway], AbstractAsyncContextManager[Client]]] = {
    "streamable-http": _legacy_streamable,
    "sse": _sse,
}


@pytest.mark.parametrize("transport", list(SESSION_TRANSPORTS))
async def test_two_clients_share_a_shared_server_and_each_gets_its_own_unshared_one(
    gateway: HttpGateway, transport: str, wait_until_gone: Callable[[int], bool]
) -> None:
    connect = SESSION_TRANSPORTS[transport]
    async with connect(gateway) as first:
        async with connect(gateway) as second:
            common = {await _pid(first, "common"), await _pid(second, "common")}
            first_own = {await _pid(first, "own"), await _pid(first, "own")}
            second_own = {await _pid(second, "own"), await _pid(second, "own")}
            assert len(common) == 1, "the shared server runs once for both clients"
            assert len(first_own) == len(second_own) == 1, "a client keeps its own session"
            assert first_own != second_own, "each client has an unshared server of its own"
            assert not first_own & common
        # The second client's session has ended: its own upstream is stopped, the first's is not.
        assert wait_until_gone(second_own.pop())
        assert is_running(next(iter(first_own)))
        assert await _pid(first, "own") in first_own
    assert wait_until_gone(first_own.pop())
    assert is_running(common.pop()), "the shared server outlives its clients"


async def test_without_sessions_each_request_has_its_own_unshared_upstream(
    gateway: HttpGateway, wait_until_gone: Callable[[int], bool]
) -> None:
    # The SDK client's default speaks the 2026-07-28 revision, which has no sessions: every request
    # stands alone, so an unshared server gets a fresh session per request (and it ends with it).
    async with streamable_client(gateway.mcp_url) as client:
        first, second = await _pid(client, "own"), await _pid(client, "own")
        common = {await _pid(client, "common"), await _pid(client, "common")}
    assert first != second
    assert wait_until_gone(first)
    assert len(common) == 1


async def test_a_shared_servers_new_tools_reach_clients_with_sessions_of_their_own(
    gateway: HttpGateway,
) -> None:
    async with _legacy_streamable(gateway) as client:
        await _pid(client, "own")  # this client now has an index of its own, beside the gateway's
        assert "late_tool" not in {tool.name for tool in (await client.list_tools()).tools}
        added = await client.call_tool("common__add_tool", {"name": "late_tool"})
        assert not added.is_error
        # The server announced the change on the call's own stream, before its result.
        assert "late_tool" in {tool.name for tool in (await client.list_tools()).tools}
        echoed = await client.call_tool("late_tool", {"text": "new"})
    assert echoed.content == [mcp.TextContent(type="text", text="new")]


async def test_over_stdio_the_one_client_keeps_its_unshared_upstream_across_requests(tmp_path: Path) -> None:
    config = tmp_path / "toolbridge.json"
    config.write_text(json.dumps(CONFIG), encoding="utf-8")
    arguments = ["-m", "toolbridge", "gateway", "--config", str(config), "--db", str(tmp_path / "calls.db")]
    gateway = StdioServerParameters(command=sys.executable, args=arguments, env=dict(os.environ))
    async with Client(gateway) as client:  # the SDK's default: 2026-07-28, no sessions
        assert await _pid(client, "own") == await _pid(client, "own")


async def test_an_agents_gateway_starts_only_the_agents_servers(tmp_path: Path) -> None:
    config = {**CONFIG, "agents": {"common-only": {"servers": ["common"]}}}
    with start_http_gateway(tmp_path, config, "--agent", "common-only") as running:
        async with streamable_client(running.mcp_url, mode="legacy") as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert not (await client.call_tool("pid", {})).is_error
            servers = _children(running.process.pid)
    assert "pid" in names  # unqualified: the agent's servers alone share no tool names
    assert not any(name.startswith("own__") for name in names)
    assert len(servers) == 1, "the unshared server outside the agent was never started"


def _children(pid: int) -> set[int]:
    children: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        children.update(int(child) for child in (task / "children").read_text().split())
    return children
