"""The terminal renderer while it asks for approval: nothing draws over the question.

The renderer writes to a real rich Console that believes it is a terminal, and the person answers on a
real pseudo-terminal standing in for stdin.
"""

from __future__ import annotations

import io
import os
import pty
import sys
import threading
from collections.abc import Iterator

import anyio
import pytest
from rich.console import Console

from toolbridge.agent import ApprovalRequest, TextDeltaEvent, ToolCallFinishedEvent, ToolCallStartedEvent
from toolbridge.cli._render import TerminalRenderer
from toolbridge.types import ToolCall, ToolSpec

pytestmark = pytest.mark.anyio

SLOW = ToolCall(id="call_slow", name="sleep", arguments={"ms": 500})
LATER = ToolCall(id="call_later", name="echo", arguments={"text": "hi"})
RISKY = ToolCall(id="call_risky", name="delete_file", arguments={"path": "a.txt"})


@pytest.fixture
def keyboard(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A pseudo-terminal as stdin; write to the returned fd to type."""
    typed, stdin_side = pty.openpty()
    stdin = os.fdopen(stdin_side, "r", encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", stdin)
    yield typed
    stdin.close()
    os.close(typed)


class WatchedOutput(io.StringIO):
    """The console's file; says when the question has been written (from the worker thread that asks)."""

    def __init__(self, awaited: str) -> None:
        super().__init__()
        self.awaited = awaited
        self.seen = threading.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if self.awaited in self.getvalue():
            self.seen.set()
        return written

    async def written(self) -> str:
        assert await anyio.to_thread.run_sync(self.seen.wait, 10), f"{self.awaited!r} was never written"
        return self.getvalue()


async def test_nothing_draws_over_an_approval_question(keyboard: int) -> None:
    output = WatchedOutput("Run delete_file")
    renderer = TerminalRenderer(Console(file=output, force_terminal=True, width=100, color_system=None))
    renderer.show(ToolCallStartedEvent(step=1, call=SLOW, server="basic"))  # a spinner is live
    request = ApprovalRequest(call=RISKY, tool=ToolSpec(name="delete_file"), reason="it deletes files")
    answers: list[bool] = []

    async def ask() -> None:
        answers.append(await renderer.ask_approval(request))

    async with anyio.create_task_group() as group:
        group.start_soon(ask)
        try:
            before = await output.written()
            # While the question waits the run goes on: another call starts, the slow one ends, text comes.
            renderer.show(ToolCallStartedEvent(step=1, call=RISKY, server="files"))
            renderer.show(ToolCallFinishedEvent(step=1, call_id=SLOW.id, name="sleep", is_error=False,
                                                result_preview="slept", duration=0.5, server="basic"))  # fmt: skip
            renderer.show(TextDeltaEvent(step=1, text="Meanwhile..."))
            renderer.show(ToolCallStartedEvent(step=1, call=LATER, server="basic"))  # prints the text so far
            during = output.getvalue()
        finally:
            os.write(keyboard, b"y\n")  # answer in any case: the asking thread must not be left waiting

    assert during == before  # not a byte over the question
    assert answers == [True]
    after = output.getvalue()[len(before) :]
    assert '✓ sleep {"ms": 500}' in after  # what waited is shown once the answer is in
    assert "Meanwhile..." in after
    renderer.close()
