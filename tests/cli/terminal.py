"""`Terminal`: toolbridge run on a real pseudo-terminal, read and typed into like a person would.

```python
with Terminal([*TOOLBRIDGE, "chat"], env=env, cwd=tmp_path) as terminal:
    terminal.expect("> ")
    terminal.type("What is 15 + 27?")
```
Every wait is bounded: `expect` fails with everything shown so far when its text does not appear.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Self

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


class Terminal:
    def __init__(self, command: list[str], *, env: dict[str, str], cwd: Path, timeout: float = 60) -> None:
        self._fd, child = pty.openpty()
        self.timeout = timeout
        self.process = subprocess.Popen(
            command, stdin=child, stdout=child, stderr=child, env={**env, "TERM": "dumb"}, cwd=cwd,
            start_new_session=True,
        )  # fmt: skip
        os.close(child)
        self._raw = ""
        self._read_to = 0

    @property
    def shown(self) -> str:
        """Everything shown so far, without terminal control sequences."""
        return _ESCAPES.sub("", self._raw)

    def expect(self, text: str) -> str:
        """Wait until `text` is shown after what earlier `expect`s matched; returns what came before it."""
        deadline = time.monotonic() + self.timeout
        while (found := self.shown.find(text, self._read_to)) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise AssertionError(f"{text!r} was not shown; the terminal shows:\n{self.shown}")
        before = self.shown[self._read_to : found]
        self._read_to = found + len(text)
        return before

    def type(self, line: str) -> None:
        os.write(self._fd, (line + "\r").encode())

    def wait(self) -> int:
        """Read until the program exits; its exit code."""
        deadline = time.monotonic() + self.timeout
        while self._read(max(0.0, deadline - time.monotonic())):
            pass
        return self.process.wait(timeout=max(1.0, deadline - time.monotonic()))

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self._fd, 65536)
        except OSError:  # EIO: the program closed the terminal
            return False
        self._raw += chunk.decode("utf-8", errors="replace")
        return bool(chunk)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        os.close(self._fd)
