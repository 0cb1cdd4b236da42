"""Where a stdio server's stderr goes: a pipe drained into the last 64 KB, readable during and after its life.

A pipe read all the time, rather than a file the child writes to: a server that floods its stderr
cannot fill a disk, and it never blocks on a full pipe either. What falls out of the 64 KB is counted.
Its lines are also logged at DEBUG (what `--verbose` shows), rate-limited so a flood cannot flood the log.
"""

from __future__ import annotations

import logging
import os
import re
from typing import TextIO

import anyio

from toolbridge.mcp._log_limit import RateLimitedLog

__all__ = ["EXIT_STATUS_MARKER", "TAIL_BYTES", "StderrLog"]

EXIT_STATUS_MARKER = "<<toolbridge: server exit status>>"
"""The line the stdio launcher appends to stderr when the server exits (see `_transports.stdio`)."""

_EXIT_STATUS_LINE = re.compile(rf"^{re.escape(EXIT_STATUS_MARKER)} (-?\d+)$", re.MULTILINE)
TAIL_BYTES = 64 * 1024
"""How much of a server's stderr is kept: the end of it, where the reason it stopped is."""
_READ_SIZE = 64 * 1024
_MAX_LOGGED_LINE = 1000
"""Characters of one stderr line that are logged; the rest of a longer line is left out."""
logger = logging.getLogger("toolbridge.mcp.stderr")


class StderrLog:
    """One server process's stderr: the child writes into `file`; the last `TAIL_BYTES` are kept.

    `keep_draining()` must run (in the session's task group) while the server lives; reading the tail
    first takes whatever is still in the pipe, so it includes everything written before the call.
    """

    def __init__(self, server: str = "server") -> None:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self._read_fd = read_fd
        # Kept open until `close()`: the child gets its own copy when it starts.
        self._writer: TextIO = os.fdopen(write_fd, "w")
        self._kept = bytearray()
        self.dropped = 0
        """Bytes the server wrote that no longer fit in the kept tail."""
        self._closed = False
        self._server = server
        self._lines = RateLimitedLog(logger, logging.DEBUG, source=f"server {server!r} stderr")
        self._partial_line = b""

    @property
    def file(self) -> TextIO:
        """The file to hand to the child as its stderr."""
        return self._writer

    async def keep_draining(self) -> None:
        """Read the pipe as the server writes to it, until cancelled or `close()`."""
        while not self._closed:
            await anyio.wait_readable(self._read_fd)
            self._drain()

    def tail(self, lines: int = 20) -> str:
        """The last `lines` lines the server wrote, without toolbridge's exit-status line."""
        text = _EXIT_STATUS_LINE.sub("", self._text())
        kept = [line for line in text.splitlines() if line.strip()]
        return "\n".join(kept[-lines:])

    def exit_code(self) -> int | None:
        """The server's exit code, once it has exited and the launcher has recorded it."""
        matches = _EXIT_STATUS_LINE.findall(self._text())
        return int(matches[-1]) if matches else None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._writer.close()
            os.close(self._read_fd)
            self._lines.report_suppressed()

    def _text(self) -> str:
        self._drain()
        return self._kept.decode("utf-8", errors="replace")

    def _drain(self) -> None:
        """Move everything waiting in the pipe into the kept tail, dropping what no longer fits."""
        if self._closed:
            return
        while True:
            try:
                chunk = os.read(self._read_fd, _READ_SIZE)
            except BlockingIOError:
                return
            if not chunk:
                return
            self._kept += chunk
            if self._lines.enabled:
                self._log_lines(chunk)
            excess = len(self._kept) - TAIL_BYTES
            if excess > 0:
                del self._kept[:excess]
                self.dropped += excess

    def _log_lines(self, chunk: bytes) -> None:
        *complete, rest = (self._partial_line + chunk).split(b"\n")
        self._partial_line = rest[:_MAX_LOGGED_LINE]  # bounded even if the server never ends a line
        for raw in complete:
            line = raw[:_MAX_LOGGED_LINE].decode("utf-8", errors="replace").rstrip()
            if line and not line.startswith(EXIT_STATUS_MARKER):
                self._lines.log("server %r stderr: %s", self._server, line)
