"""toolbridge's HTTP client fails the way httpx2's own does, so a server that is down is not called slow."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import httpx2
import pytest
import trio
import uvicorn
from httpx_aiohttp.httpx2 import AiohttpTransport

from toolbridge._http_client import KEEPALIVE_EXPIRY, async_http_client

pytestmark = pytest.mark.anyio

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def raw_server(handler: Handler) -> AsyncIterator[str]:
    """A TCP server on 127.0.0.1 that answers each connection with `handler`; yields its URL."""
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}/"


async def _read_request(reader: asyncio.StreamReader) -> None:
    await reader.readuntil(b"\r\n\r\n")


async def test_a_refused_connection_is_a_connect_error_not_a_timeout() -> None:
    server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()  # the port is now closed: connecting is refused
    async with async_http_client() as client:
        with pytest.raises(httpx2.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")


async def test_a_server_that_closes_without_answering_is_a_protocol_error() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.close()

    async with raw_server(hang_up) as url, async_http_client() as client:
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.get(url)


async def test_a_stream_cut_mid_body_is_a_read_error_after_the_chunks_that_came() -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        writer.write(b"d\r\ndata: first\n\n\r\n")
        await writer.drain()
        writer.transport.abort()

    received: list[bytes] = []

    async def read_all(url: str, client: httpx2.AsyncClient) -> None:
        async with client.stream("GET", url) as response:
            async for chunk in response.aiter_bytes():
                received.append(chunk)

    async with raw_server(cut) as url, async_http_client() as client:
        with pytest.raises(httpx2.ReadError):
            await read_all(url, client)
    assert b"".join(received) == b"data: first\n\n"


async def test_a_whole_streamed_answer_arrives_and_the_connection_is_kept() -> None:
    connections = 0

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        for _ in range(2):
            await _read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello")
            await writer.drain()

    async with raw_server(answer) as url, async_http_client() as client:
        assert (await client.get(url)).text == "hello"
        assert (await client.get(url)).text == "hello"
    assert connections == 1


def test_under_trio_the_client_is_httpx2s_own() -> None:
    async def main() -> None:
        async with async_http_client() as client:
            assert type(client) is httpx2.AsyncClient
            with pytest.raises(httpx2.ConnectError):
                await client.get("http://127.0.0.1:1/")

    trio.run(main)


async def test_a_proxy_from_the_environment_carries_the_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    request_lines: list[bytes] = []

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        request_lines.append(head.split(b"\r\n", 1)[0])
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nvia proxy")
        await writer.drain()
        writer.close()

    async with raw_server(proxy) as proxy_url:
        monkeypatch.setenv("HTTP_PROXY", proxy_url)
        async with async_http_client() as client:
            answer = await client.get("http://model.internal/v1/models")
    assert answer.text == "via proxy"
    assert request_lines == [b"GET http://model.internal/v1/models HTTP/1.1"]


async def test_a_connection_the_server_closed_while_idle_is_not_used_and_the_request_is_not_lost() -> None:
    # The server's close is on the client's socket, not yet seen by the event loop (which has not run since):
    # a request sent on that connection would be lost, not knowing whether it ran.
    bodies: list[list[bytes]] = []
    sockets: list[socket.socket] = []

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sockets.append(writer.get_extra_info("socket"))
        bodies.append(received := [])
        with contextlib.suppress(asyncio.IncompleteReadError):  # the client or the test closed it
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                received.append(await reader.readexactly(length))
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                await writer.drain()
        writer.close()

    async with raw_server(answer) as url, async_http_client() as client:
        assert (await client.post(url, content=b"first")).text == "ok"
        sockets[0].shutdown(socket.SHUT_RDWR)  # the server closes the idle connection
        assert (await client.post(url, content=b"second")).text == "ok"
    assert bodies == [[b"first"], [b"second"]]  # the second went on a new connection


async def test_idle_connections_are_let_go_before_uvicorns_default_keep_alive_ends_them() -> None:
    server_keep_alive = uvicorn.Config(app=None).timeout_keep_alive  # the MCP SDK's server runs with it
    async with async_http_client() as client:
        transport = client._transport
        assert isinstance(transport, AiohttpTransport)
        connector = transport.get_client().connector
        assert connector is not None
        assert connector._keepalive_timeout == KEEPALIVE_EXPIRY < server_keep_alive  # type: ignore[attr-defined]
        await connector.close()
