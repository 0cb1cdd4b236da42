"""The sockets under a model's HTTP client (`toolbridge.models._network`), against a raw HTTP/1.1 server
on 127.0.0.1: on asyncio, on uvloop (what `toolbridge serve` runs on), and on trio (handed to httpcore's
own backend)."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import httpx2
import openai
import pytest
from anyio.streams.tls import TLSListener
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from toolbridge.models import ModelRequest, TextDelta
from toolbridge.models._network import AsyncioStream, with_asyncio_sockets
from toolbridge.models.openai import OpenAIChatModel
from toolbridge.testing import ScriptedModel, Turn
from toolbridge.types import UserMessage

LIMITS = httpx2.Limits(max_connections=10, max_keepalive_connections=10, keepalive_expiry=None)
"""No expiry: an idle connection is dropped only for what its server did."""
BIG = bytes(range(256)) * 12_000
"""Three megabytes: more than the backend buffers before it stops reading the socket."""


@pytest.fixture(
    params=[
        pytest.param(("asyncio", {}), id="asyncio"),
        pytest.param(("asyncio", {"use_uvloop": True}), id="uvloop"),
        pytest.param(("trio", {}), id="trio"),
    ]
)
def anyio_backend(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return request.param  # type: ignore[no-any-return]


class RawServer:
    """Answers GET requests on kept-alive connections, by path: `/stream` (chunked, in pieces),
    `/big` (BIG), `/stall` (headers, then nothing), `/once` (an answer, then the connection closed
    although it said nothing of closing). Counts the connections it accepted."""

    def __init__(self) -> None:
        self.connections = 0
        self.port = 0
        self.targets: list[str] = []

    async def handle(self, stream: anyio.abc.ByteStream) -> None:
        self.connections += 1
        buffer = b""
        async with stream:
            while True:
                while b"\r\n\r\n" not in buffer:
                    try:
                        buffer += await stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        return
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                target = head.split(b" ")[1].decode()
                self.targets.append(target)
                path = "/" + target.split("://", 1)[-1].partition("/")[2]  # a proxy is sent whole URLs
                if path == "/stream":
                    await stream.send(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                    for number in range(20):
                        piece = f"data: {number}\n\n".encode()
                        await stream.send(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await stream.send(b"0\r\n\r\n")
                elif path == "/big":
                    await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BIG) + BIG)
                elif path == "/stall":
                    await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
                    await anyio.sleep_forever()
                else:
                    await stream.send(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    if path == "/once":
                        return


@asynccontextmanager
async def raw_server(tls: ssl.SSLContext | None = None) -> AsyncIterator[RawServer]:
    server = RawServer()
    listener: anyio.abc.Listener[Any] = await anyio.create_tcp_listener(local_host="127.0.0.1")
    server.port = listener.extra(anyio.abc.SocketAttribute.local_port)  # type: ignore[attr-defined]
    if tls is not None:
        listener = TLSListener(listener, tls, standard_compatible=False)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, server.handle)
        try:
            yield server
        finally:
            group.cancel_scope.cancel()


def client(**options: Any) -> httpx2.AsyncClient:
    return with_asyncio_sockets(httpx2.AsyncClient(limits=LIMITS, timeout=5, **options))


async def until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "the condition never came true"
        await anyio.sleep(0.01)  # polling a condition, with a deadline


@pytest.mark.anyio
async def test_a_chunked_stream_arrives_whole_and_in_order() -> None:
    async with (
        raw_server() as server,
        client() as http,
        http.stream("GET", f"http://127.0.0.1:{server.port}/stream") as response,
    ):
        body = b"".join([part async for part in response.aiter_bytes()])
    assert body == b"".join(f"data: {number}\n\n".encode() for number in range(20))


@pytest.mark.anyio
async def test_a_body_larger_than_the_buffer_arrives_whole_when_read_slowly() -> None:
    async with raw_server() as server, client() as http:
        async with http.stream("GET", f"http://127.0.0.1:{server.port}/big") as response:
            parts = []
            async for part in response.aiter_raw():
                parts.append(part)
                await anyio.lowlevel.checkpoint()  # the reader falls behind: reading pauses, resumes
        again = await http.get(f"http://127.0.0.1:{server.port}/big")
    assert b"".join(parts) == BIG
    assert again.content == BIG
    assert server.connections == 1  # the connection was reused


@pytest.mark.anyio
async def test_a_server_that_stops_sending_times_the_read_out() -> None:
    async with raw_server() as server, client() as http:
        with pytest.raises(httpx2.ReadTimeout):
            await http.get(f"http://127.0.0.1:{server.port}/stall", timeout=httpx2.Timeout(5, read=0.2))


@pytest.mark.anyio
async def test_a_connection_the_server_closed_while_idle_is_not_reused() -> None:
    async with raw_server() as server, client() as http:
        assert (await http.get(f"http://127.0.0.1:{server.port}/once")).text == "ok"
        pool = http._transport._pool  # type: ignore[attr-defined]
        await until(lambda: all(connection.has_expired() for connection in pool.connections))
        assert (await http.get(f"http://127.0.0.1:{server.port}/once")).text == "ok"
    assert server.connections == 2


@pytest.mark.anyio
async def test_a_refused_connection_is_a_connect_error() -> None:
    async with raw_server() as server:
        port = server.port
    async with client() as http:
        with pytest.raises(httpx2.ConnectError):
            await http.get(f"http://127.0.0.1:{port}/")


@pytest.mark.anyio
async def test_a_proxy_from_the_environment_is_still_used(monkeypatch: pytest.MonkeyPatch) -> None:
    async with raw_server() as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        async with client() as http:
            assert (await http.get("http://model.invalid/ok")).text == "ok"
    assert proxy.targets == ["http://model.invalid/ok"]


@pytest.mark.anyio
async def test_https_goes_through_a_tls_handshake_and_checks_the_certificate(tmp_path: Path) -> None:
    server_tls, trusted = tls_contexts(tmp_path)
    async with raw_server(tls=server_tls) as server:
        async with (
            client(verify=trusted) as http,
            http.stream("GET", f"https://127.0.0.1:{server.port}/stream") as response,
        ):
            body = b"".join([part async for part in response.aiter_bytes()])
        assert body == b"".join(f"data: {number}\n\n".encode() for number in range(20))
        async with client() as untrusting:  # the system's CAs do not know this certificate
            with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await untrusting.get(f"https://127.0.0.1:{server.port}/stream")


@pytest.mark.anyio
async def test_an_openai_model_streams_through_the_asyncio_backend(anyio_backend: Any) -> None:
    async with ScriptedModel([Turn.text("Hello there, friend.")]) as scripted:
        model = OpenAIChatModel("scripted", base_url=scripted.base_url, api_key="test")
        try:
            async with model.stream(ModelRequest(messages=[UserMessage(content="Hi")])) as events:
                text = "".join([event.text async for event in events if isinstance(event, TextDelta)])
            sdk_client: openai.AsyncOpenAI = model._clients.get()
            [connection] = sdk_client._client._transport._pool.connections  # type: ignore[attr-defined]
            stream = connection._connection._network_stream
        finally:
            await model.aclose()
    assert text == "Hello there, friend."
    # On trio the backend hands the connection to httpcore's own.
    assert isinstance(stream, AsyncioStream) == (anyio_backend[0] == "asyncio")


def tls_contexts(directory: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server's context with a fresh self-signed certificate for 127.0.0.1, and a client's that
    trusts it."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "toolbridge test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    certificate_file, key_file = directory / "cert.pem", directory / "key.pem"
    certificate_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(certificate_file, key_file)
    trusted = ssl.create_default_context(cafile=str(certificate_file))
    return server, trusted
