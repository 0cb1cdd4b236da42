"""Where a stdio server's stderr goes: a temp file we can read the tail of, during and after its life."""

from __future__ import annotations

import os
import re
import tempfile
from typing import TextIO

__all__ = ["EXIT_STATUS_MARKER", "StderrLog"]

EXIT_STATUS_MARKER = "<<toolbridge: server exit status>>"
"""The line the stdio launcher appends to stderr when the server exits (see `_transports.stdio`)."""

_EXIT_STATUS_LINE = re.compile(rf"^{re.escape(EXIT_STATUS_MARKER)} (-?\d+)$", re.MULTILINE)
_TAIL_BYTES = 16 * 1024


class StderrLog:
    """A temp file that receives one server process's stderr.

    A file rather than a pipe: nobody has to drain it for the server to make progress, and what a
    server printed before it died is still there to quote in the error.
    """

    def __init__(self) -> None:
        # Kept open for the server's whole life and closed by `close()`, hence no `with`.
        self._file: TextIO = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115

    @property
    def file(self) -> TextIO:
        """The file to hand to the child as its stderr."""
        return self._file

    def tail(self, lines: int = 20) -> str:
        """The last `lines` lines the server wrote, without toolbridge's exit-status line."""
        text = _EXIT_STATUS_LINE.sub("", self._read_tail())
        kept = [line for line in text.splitlines() if line.strip()]
        return "\n".join(kept[-lines:])

    def exit_code(self) -> int | None:
        """The server's exit code, once it has exited and the launcher has recorded it."""
        matches = _EXIT_STATUS_LINE.findall(self._read_tail())
        return int(matches[-1]) if matches else None

    def close(self) -> None:
        self._file.close()

    def _read_tail(self) -> str:
        if self._file.closed:
            return ""
        # pread: the child appends through its own descriptor, our file position is irrelevant.
        fd = self._file.fileno()
        size = os.fstat(fd).st_size
        data = os.pread(fd, _TAIL_BYTES, max(0, size - _TAIL_BYTES))
        return data.decode("utf-8", errors="replace")
