"""The gateway's call log: written off the event loop, in batches, and whole once the gateway stops."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import anyio
import anyio.lowlevel
import pytest

from toolbridge.gateway._call_log import BackgroundCallLog, LoggedCall
from toolbridge.types import ToolCall, ToolResult

pytestmark = pytest.mark.anyio


def _logged(n: int) -> tuple[ToolCall, ToolResult, datetime]:
    call = ToolCall(name="echo", arguments={"n": n}, id=f"call_{n}")
    return call, ToolResult(call_id=call.id, server="basic"), datetime.now(UTC)


async def _let_the_writer_run() -> None:
    for _ in range(20):  # every ready task gets its turn: the writer takes what is queued
        await anyio.lowlevel.checkpoint()


async def test_calls_made_while_a_batch_lingers_are_written_in_one_go_when_the_gateway_stops() -> None:
    batches: list[list[str]] = []

    def write(calls: Sequence[LoggedCall]) -> None:
        batches.append([call.id for call, _, _ in calls])

    # A linger far longer than the test: only leaving `running()` can have ended it.
    log = BackgroundCallLog(write, linger=600)
    with anyio.fail_after(20):
        async with log.running():
            log(*_logged(1))
            await _let_the_writer_run()  # without the linger, call 1 would be written alone now
            log(*_logged(2))
            await _let_the_writer_run()
            assert batches == []
    assert batches == [["call_1", "call_2"]]


async def test_a_call_log_that_cannot_be_written_does_not_stop_the_gateway() -> None:
    def write(calls: Sequence[LoggedCall]) -> None:
        raise OSError("disk full")

    log = BackgroundCallLog(write, linger=0)
    with anyio.fail_after(20):
        async with log.running():
            log(*_logged(1))
            await _let_the_writer_run()
            log(*_logged(2))
    # Leaving `running()` raised nothing: the failures were logged, and serving went on.
