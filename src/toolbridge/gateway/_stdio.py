"""The gateway's stdio transport: the SDK's `stdio_server`, reading and writing on the event loop.

The SDK reads stdin and writes stdout in worker threads: three thread hops per message pair (read a line,
write, flush), each a wake-up of another thread and a round for the interpreter's lock, which costs the
gateway more than its own work on a fast call. When stdin and stdout are pipes or sockets (as when an MCP
client starts the gateway) the event loop can watch them itself; the SDK's `stdio_server` is then given
loop-driven files instead of its threaded ones, and keeps its framing and parsing. Anything else (a
terminal, a file) is served by the SDK as it is.

Like the SDK, while serving the process's own stdin reads the null device and its stdout goes to stderr,
so a stray print cannot corrupt the wire; both are put back on leaving.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager, suppress
from typing import IO, Any

from mcp.server.stdio import stdio_server

__all__ = ["stdio_streams"]

_LINE_LIMIT = 256 * 1024 * 1024
"""The longest message line read (bytes); an MCP message can carry whole files or images."""


@asynccontextmanager
async def stdio_streams(stdin_fd: int = 0, stdout_fd: int = 1) -> AsyncIterator[Any]:
    """The (read, write) streams of `stdio_server()`, served over `stdin_fd` and `stdout_fd`."""
    if not (_loop_can_watch(stdin_fd) and _loop_can_watch(stdout_fd)):
        async with stdio_server() as streams:
            yield streams
        return
    async with AsyncExitStack() as stack:
        wire_in = stack.enter_context(_claimed(stdin_fd, os.open(os.devnull, os.O_RDONLY)))
        wire_out = stack.enter_context(_claimed(stdout_fd, os.dup(2)))
        reader = await _LineReader.open(_file(wire_in, "rb"))
        writer = await _LineWriter.open(_file(wire_out, "wb"))
        stack.push_async_callback(writer.aclose)
        stack.callback(reader.close)
        async with stdio_server(stdin=reader, stdout=writer) as streams:  # type: ignore[arg-type]
            yield streams


def _loop_can_watch(fd: int) -> bool:
    """A pipe or socket, and an asyncio event loop (on which anyio runs here) to watch it."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) or sys.platform == "win32":
        return False
    try:
        asyncio.get_running_loop()  # raises under trio
    except RuntimeError:
        return False
    return True


@contextmanager
def _claimed(fd: int, diversion: int) -> Iterator[int]:
    """The wire behind `fd`, on a descriptor of its own; `fd` meanwhile points where `diversion` does."""
    wire = os.dup(fd)  # not inherited by children: they must not hold the client's pipe open
    os.dup2(diversion, fd)
    os.close(diversion)
    try:
        yield wire
    finally:
        os.dup2(wire, fd)
        os.close(wire)
        os.set_blocking(fd, True)  # the event loop made it non-blocking: leave it as it was found


def _file(wire: int, mode: str) -> IO[bytes]:
    """A file for a transport on `wire`, which it closes when done (`wire` itself stays open)."""
    return os.fdopen(os.dup(wire), mode, buffering=0)


class _LineReader:
    """Lines from a pipe, read as the event loop sees data arrive (`async for line in reader`)."""

    def __init__(self, stream: asyncio.StreamReader, transport: asyncio.BaseTransport) -> None:
        self._stream = stream
        self._transport = transport

    @classmethod
    async def open(cls, wire: IO[bytes]) -> _LineReader:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=_LINE_LIMIT, loop=loop)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), wire)
        return cls(stream, transport)

    def __aiter__(self) -> _LineReader:
        return self

    async def __anext__(self) -> str:
        line = await self._stream.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    def close(self) -> None:
        self._transport.close()


class _LineWriter:
    """Writes to a pipe from the event loop; `flush()` waits while the pipe is full."""

    def __init__(self, stream: asyncio.StreamWriter) -> None:
        self._stream = stream

    @classmethod
    async def open(cls, wire: IO[bytes]) -> _LineWriter:
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, wire)
        return cls(asyncio.StreamWriter(transport, protocol, None, loop))

    async def write(self, text: str) -> None:
        self._stream.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._stream.drain()

    async def aclose(self) -> None:
        """Write out what the pipe has not taken yet, then close it."""
        self._stream.transport.set_write_buffer_limits(high=0)  # drain() now waits for an empty buffer
        with suppress(ConnectionError):  # the client has gone: nothing to flush
            await self._stream.drain()
        self._stream.close()
