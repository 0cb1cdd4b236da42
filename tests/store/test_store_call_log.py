"""The call log as an observer of the call pipeline (`CallLog`): one row per call however it ends, with
its caller and user, written as each call ends or in batches while running."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from sqlalchemy import create_engine, text

from tool_helpers import shout, wait_forever
from toolbridge.config.agents import ApprovalPolicy
from toolbridge.store import CallLog, Store
from toolbridge.tools import CallContext, ToolPipeline, ToolRegistry
from toolbridge.types import ToolCall

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def rows(db_url: str) -> list[tuple[Any, ...]]:
    engine = create_engine(db_url)
    with engine.connect() as connection:
        found = connection.execute(
            text("SELECT call_id, tool, server, status, error_kind, caller, user_id FROM tool_calls")
        ).all()
    engine.dispose()
    return sorted(tuple(row) for row in found)


async def test_every_call_is_one_row_with_its_caller_however_it_ends(store: Store, db_url: str) -> None:
    pipeline = ToolPipeline(ToolRegistry(native=[shout, wait_forever]), [CallLog(store.log_tool_calls)])
    context = CallContext(caller="gateway", user_id=None)
    await pipeline.call(ToolCall(id="c1", name="shout", arguments={"text": "x"}), context)
    await pipeline.call(ToolCall(id="c2", name="nope"), context)
    approval = ApprovalPolicy(default="always")
    await pipeline.call(
        ToolCall(id="c3", name="shout", arguments={"text": "x"}), context.but(approval=approval)
    )
    async with anyio.create_task_group() as group:
        group.start_soon(pipeline.call, ToolCall(id="c4", name="wait_forever"), context)
        await anyio.wait_all_tasks_blocked()
        group.cancel_scope.cancel()

    assert rows(db_url) == [
        ("c1", "shout", "native", "ok", None, "gateway", None),
        ("c2", "nope", "", "error", "unknown_tool", "gateway", None),
        ("c3", "shout", "native", "denied", "denied", "gateway", None),
        ("c4", "wait_forever", "native", "cancelled", "cancelled", "gateway", None),
    ]


async def test_running_it_writes_in_batches_and_everything_on_leaving(store: Store, db_url: str) -> None:
    log = CallLog(store.log_tool_calls, linger=3600)  # nothing is written before leaving
    pipeline = ToolPipeline(ToolRegistry(native=[shout]), [log])
    async with log.running():
        for index in range(3):
            await pipeline.call(ToolCall(id=f"c{index}", name="shout", arguments={"text": "x"}))
        assert rows(db_url) == []
    assert [row[0] for row in rows(db_url)] == ["c0", "c1", "c2"]
