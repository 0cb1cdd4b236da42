"""`LeanHttpTransport` (toolbridge.mcp._transports._http1) against a plain HTTP server on 127.0.0.1 that
answers the way servers do, well and badly; and MCP over streamable HTTP going through it."""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpcore2
import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection
from toolbridge.mcp._transports._http1 import LeanHttpTransport

pytestmark = pytest.mark.anyio

Answer = Callable[[bytes, asyncio.StreamWriter], Awaitable[None]]
"""Answers one request (its body) on the connection's writer."""


@dataclass
class RawServer:
    """Answers each request by its path; counts the connections it was sent on."""

    answers: dict[str, Answer]
    connections: int = 0
    port: int = 0
    request_sent: asyncio.Event = field(default_factory=asyncio.Event)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                lines = head.decode("latin-1").split("\r\n")
                path = lines[0].split(" ")[1]
                headers = dict(line.lower().split(": ", 1) for line in lines[1:] if line)
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.request_sent.set()
                await self.answers[path](body, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def tls_url(self) -> str:
        return f"https://127.0.0.1:{self.port}"


@asynccontextmanager
async def raw_server(tls: ssl.SSLContext | None = None, **answers: Answer) -> AsyncIterator[RawServer]:
    server = RawServer({f"/{path}": answer for path, answer in answers.items()})
    listening = await asyncio.start_server(server.serve, "127.0.0.1", 0, ssl=tls)
    server.port = listening.sockets[0].getsockname()[1]
    async with listening:
        yield server


async def echo(body: bytes, writer: asyncio.StreamWriter) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(body)
    )
    writer.write(body)


def client(**options: float) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=LeanHttpTransport(), timeout=httpx2.Timeout(10, **options))


async def test_requests_are_answered_on_one_kept_alive_connection() -> None:
    async with raw_server(echo=echo) as server, client() as http:
        answers = [await http.post(f"{server.url}/echo", json={"n": n}) for n in range(3)]
        empty = await http.post(f"{server.url}/echo")

    assert [answer.json() for answer in answers] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert answers[0].headers["content-type"] == "application/json"
    assert (empty.status_code, empty.content) == (200, b"")
    assert server.connections == 1


async def test_a_streamed_body_arrives_as_the_server_sends_it() -> None:
    first_read = asyncio.Event()

    async def stream(body: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        writer.write(b"6\r\nfirst\n\r\n")
        await first_read.wait()  # the rest only once the client has the first part
        writer.write(b"7\r\nsecond\n\r\n0\r\n\r\n")

    async with raw_server(stream=stream) as server, client() as http:
        async with http.stream("POST", f"{server.url}/stream", json={}) as response:
            parts = []
            async for part in response.aiter_bytes():
                parts.append(part)
                first_read.set()
        again = await http.post(f"{server.url}/stream", json={})  # the connection is reused after a stream

    assert parts == [b"first\n", b"second\n"]
    assert again.content == b"first\nsecond\n"
    assert server.connections == 1


async def test_a_body_without_a_length_ends_where_the_connection_does() -> None:
    async def until_close(body: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nall of it")
        writer.close()

    async with raw_server(until_close=until_close) as server, client() as http:
        first = await http.get(f"{server.url}/until_close")
        second = await http.get(f"{server.url}/until_close")

    assert (first.content, second.content) == (b"all of it", b"all of it")
    assert server.connections == 2


async def test_a_large_body_is_read_whole_while_reading_pauses_and_resumes() -> None:
    large = b"x" * (5 << 20)

    async def big(body: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(large))
        writer.write(large)
        await writer.drain()

    async with raw_server(big=big, echo=echo) as server, client() as http:
        answer = await http.get(f"{server.url}/big")
        echoed = await http.post(f"{server.url}/echo", content=large)

    assert answer.content == large
    assert echoed.content == large
    assert server.connections == 1


async def test_a_server_that_hangs_up_mid_answer_is_a_protocol_error_and_its_connection_is_not_reused() -> (
    None
):
    async def cut(body: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly ten b")
        writer.close()

    async with raw_server(cut=cut, echo=echo) as server, client() as http:
        with pytest.raises(httpx2.RemoteProtocolError, match="closed the connection mid-response"):
            await http.get(f"{server.url}/cut")
        after = await http.post(f"{server.url}/echo", content=b"fine")

    assert after.content == b"fine"
    assert server.connections == 2


async def test_garbage_instead_of_http_is_a_protocol_error() -> None:
    async def garbage(body: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(b"SMTP ready\r\n\r\n")

    async with raw_server(garbage=garbage) as server, client() as http:
        with pytest.raises(httpx2.RemoteProtocolError, match="invalid HTTP response"):
            await http.get(f"{server.url}/garbage")


async def test_a_silent_server_is_a_read_timeout_and_its_connection_is_dropped() -> None:
    async def silent(body: bytes, writer: asyncio.StreamWriter) -> None:
        await asyncio.Event().wait()  # never answers; cancelled when the server closes

    async with raw_server(silent=silent, echo=echo) as server, client(read=0.2) as http:
        with pytest.raises(httpx2.ReadTimeout, match=r"sent nothing for 0\.2 seconds"):
            await http.get(f"{server.url}/silent")
        after = await http.post(f"{server.url}/echo", content=b"fine")

    assert after.content == b"fine"
    assert server.connections == 2


async def test_a_request_cancelled_while_waiting_leaves_no_half_used_connection() -> None:
    async def silent(body: bytes, writer: asyncio.StreamWriter) -> None:
        await asyncio.Event().wait()

    async with raw_server(silent=silent, echo=echo) as server, client() as http:
        waiting = asyncio.create_task(http.get(f"{server.url}/silent"))
        await server.request_sent.wait()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        after = await http.post(f"{server.url}/echo", content=b"fine")

    assert after.content == b"fine"
    assert server.connections == 2


async def test_requests_beyond_the_connection_limit_wait_for_a_connection_to_come_free() -> None:
    release = asyncio.Event()

    async def held(body: bytes, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        await release.wait()
        writer.write(b"0\r\n\r\n")

    transport = LeanHttpTransport(max_connections=1)
    async with raw_server(held=held, echo=echo) as server, httpx2.AsyncClient(transport=transport) as http:
        async with http.stream("GET", f"{server.url}/held") as holding:
            with pytest.raises(httpx2.PoolTimeout):
                await http.post(f"{server.url}/echo", content=b"next", timeout=httpx2.Timeout(10, pool=0.1))
            release.set()
            await holding.aread()
        after = await http.post(f"{server.url}/echo", content=b"next")

    assert after.content == b"next"
    assert server.connections == 1


def _certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=1))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


async def test_https_is_verified_against_the_trusted_certificates(tmp_path: Path) -> None:
    cert_file, key_file = _certificate(tmp_path)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert_file, key_file)
    trusting = ssl.create_default_context(cafile=str(cert_file))

    async with raw_server(tls=served, echo=echo) as server:
        async with httpx2.AsyncClient(transport=LeanHttpTransport(trusting)) as http:
            answers = [await http.post(f"{server.tls_url}/echo", content=b"secret") for _ in range(2)]
        async with client() as http:  # httpx2's default trust: not this self-signed certificate
            with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await http.post(f"{server.tls_url}/echo", content=b"secret")

    assert [answer.content for answer in answers] == [b"secret", b"secret"]
    assert server.connections == 1  # kept alive for both (a refused handshake never reaches the server)


async def test_nobody_listening_is_a_connect_error() -> None:
    async with raw_server() as server:
        port = server.port  # free once the server is gone
    async with client() as http:
        with pytest.raises(httpx2.ConnectError, match=f"could not connect to 127.0.0.1:{port}"):
            await http.get(f"http://127.0.0.1:{port}/")


async def test_mcp_over_streamable_http_goes_through_it_and_not_httpcore(
    http_server: Callable[..., object], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The point of it: calls to an HTTP server cost no httpcore2 connection pool."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("an httpcore2 connection pool was made for a streamable HTTP server")

    server = http_server("basic", "streamable-http")
    config: ServerConfig = server.config("remote")  # type: ignore[attr-defined]
    monkeypatch.setattr(httpcore2.AsyncConnectionPool, "__init__", refuse)
    async with ServerConnection(config) as connection:
        echoed = [await connection.call_tool("echo", {"text": f"n{n}"}, call_id=f"e{n}") for n in range(3)]

    assert [result.text for result in echoed] == ["n0", "n1", "n2"]
