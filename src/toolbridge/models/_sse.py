"""Server-sent events, decoded incrementally: `SseDecoder.feed(bytes) -> [data]`.

Pure and small, because it runs for every chunk a streaming model sends: the `data` of each event as
bytes (its `data:` lines joined by newlines), ready for `json.loads`. Event names, ids, `retry` and
comments are dropped: chat completions use none of them.
"""

from __future__ import annotations

__all__ = ["SseDecoder"]


class SseDecoder:
    """Bytes in as they arrive (any chunking), the data of each complete event out."""

    def __init__(self) -> None:
        self._pending = b""
        """The start of a line whose end has not arrived yet."""
        self._data: list[bytes] = []
        """The `data:` lines of the event being read."""
        self._after_cr = False
        """Whether the last chunk ended in "\r": a "\n" starting the next one ends no other line."""

    def feed(self, chunk: bytes) -> list[bytes]:
        if self._after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._after_cr = chunk[-1:] == b"\r"
        buffer = self._pending + chunk if self._pending else chunk
        lines = buffer.splitlines(keepends=True)
        if lines and lines[-1][-1:] not in (b"\n", b"\r"):
            self._pending = lines.pop()  # the start of a line: it waits for the rest
        else:
            self._pending = b""
        events: list[bytes] = []
        for line in lines:
            line = line.rstrip(b"\r\n")
            if not line:  # a blank line ends the event
                if self._data:
                    events.append(b"\n".join(self._data))
                    self._data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                self._data.append(value[1:] if value[:1] == b" " else value)
            elif line == b"data":  # a field without a colon has an empty value
                self._data.append(b"")
        return events
