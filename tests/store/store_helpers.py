"""Cases the store's tests run on SQLite and on PostgreSQL alike: data of every kind, logs of every outcome,
and databases of earlier schemas to migrate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from alembic import command
from sqlalchemy import create_engine, text

from toolbridge.store import Store, ToolCallLogEntry
from toolbridge.store._engine import _alembic_config
from toolbridge.tools.cache import argument_hash
from toolbridge.types import (
    AssistantMessage,
    AudioPart,
    ImagePart,
    Message,
    ResourcePart,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
)

EVERY_KIND: list[Message] = [
    SystemMessage(content="You are terse."),
    UserMessage(content="What is 15 + 27, and what's in notes.txt?\nThanks! ünïcödé 🙂"),
    UserMessage(
        content="And these?",
        attachments=[
            ResourcePart(uri="note://readme", mime_type="text/plain", text="Read me."),
            ResourcePart(uri="image://dot.png", mime_type="image/png", blob="iVBORw0K"),
        ],
    ),
    AssistantMessage(
        content="Let me check.",
        reasoning="Two calls: add, then read.",
        tool_calls=[
            ToolCall(name="add", arguments={"a": 15, "b": 27}, id="call_1", source="basic"),
            ToolCall(
                name="read_file", arguments={"path": "notes.txt", "opts": {"n": [1, 2.5, None]}}, id="call_2"
            ),
        ],
    ),
    ToolMessage(
        name="add",
        result=ToolResult(
            call_id="call_1",
            content=[TextPart(text="42")],
            structured_content={"sum": 42},
            server="basic",
            duration=0.0125,
            notes=["coerced 'a' to an integer"],
            cached=True,
        ),
    ),
    ToolMessage(
        name="read_file",
        result=ToolResult(
            call_id="call_2",
            content=[
                ImagePart(data="aGVsbG8=", mime_type="image/png"),
                AudioPart(data="AAAA", mime_type="audio/wav"),
                ResourcePart(uri="file:///notes.txt", mime_type="text/plain", text="buy milk"),
                ResourcePart(uri="file:///blob.bin", blob="AQID"),
            ],
            server="files",
            duration=1.5,
        ),
    ),
    ToolMessage(
        name="missing", result=ToolResult.error("call_3", "unknown tool 'missing'", kind="unknown_tool")
    ),
    AssistantMessage(content="42, and the notes say: buy milk."),
    AssistantMessage(),
]


NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def entry(tool: str, server: str, duration: float, minutes_ago: float, **fields: object) -> ToolCallLogEntry:
    values: dict[str, object] = {
        "tool": tool,
        "server": server,
        "call_id": f"call_{tool}_{minutes_ago}",
        "argument_hash": argument_hash({}),
        "started_at": NOW - timedelta(minutes=minutes_ago),
        "duration": duration,
        "status": "ok",
        **fields,
    }
    return ToolCallLogEntry.model_validate(values)


def log_every_outcome(store: Store) -> None:
    """`echo`: two successes, a failure (bad arguments), a declined and a cancelled call."""
    started = datetime.now(UTC) - timedelta(minutes=1)
    outcomes = [
        ToolResult(call_id="c1", server="basic", duration=0.1),
        ToolResult(call_id="c2", server="basic", duration=0.3),
        ToolResult.error("c3", "'text' is a required property", kind="invalid_arguments", server="basic"),
        ToolResult.error("c4", "The user declined this call", kind="denied", server="basic"),
        ToolResult.error("c5", "The run was cancelled.", kind="cancelled", server="basic", duration=9.0),
    ]
    for result in outcomes:
        call = ToolCall(name="echo", arguments={}, id=result.call_id)
        store.log_tool_call(ToolCallLogEntry.from_result(call, result, started_at=started))


def check_every_outcome(store: Store) -> None:
    [echo] = store.tool_stats()
    assert (echo.calls, echo.succeeded, echo.failed, echo.denied, echo.cancelled) == (5, 2, 1, 1, 1)
    assert echo.success_rate == pytest.approx(2 / 3)  # declined and cancelled calls are not failures
    assert echo.last_error == "'text' is a required property"
    assert echo.p95 == pytest.approx(0.28)  # finished calls only (0, 0.1, 0.3): the cancelled 9 s is none


def migrate_from_first_schema(url: str) -> None:
    """A log written by the first schema (timeouts and declined calls told by status alone) reads right
    after the migration to error kinds."""
    engine = create_engine(url)
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0001_initial")
        for number, status in enumerate(["ok", "timeout", "denied", "error"]):
            connection.execute(
                text(
                    "INSERT INTO tool_calls (call_id, tool, server, argument_hash, started_at, duration, "
                    "status, error, cache_hit) VALUES (:call_id, 'add', 'basic', '', :at, 0.5, :status, "
                    ":error, false)"
                ),
                {
                    "call_id": f"c{number}",
                    "at": datetime(2025, 1, 1, tzinfo=UTC).replace(tzinfo=None),
                    "status": status,
                    "error": None if status == "ok" else f"{status} happened",
                },
            )
    engine.dispose()
    with Store(url) as store:
        [add] = store.tool_stats()
    assert (add.calls, add.succeeded, add.failed, add.denied, add.cancelled) == (4, 1, 2, 1, 0)
    engine = create_engine(url)
    with engine.connect() as connection:
        kinds = dict(connection.execute(text("SELECT call_id, error_kind FROM tool_calls")).all())
    engine.dispose()
    assert kinds == {"c0": None, "c1": "timeout", "c2": "denied", "c3": None}


def migrate_log_of_the_third_schema(url: str) -> None:
    """A call logged before `caller` existed reads as an agent's; calls logged after keep their caller."""
    engine = create_engine(url)
    with engine.begin() as connection:
        command.upgrade(_alembic_config(connection), "0003_message_attachments")
        connection.execute(
            text(
                "INSERT INTO tool_calls (call_id, tool, server, argument_hash, started_at, duration, "
                "status, cache_hit) VALUES ('old', 'add', 'basic', '', :at, 0.5, 'ok', false)"
            ),
            {"at": datetime(2025, 1, 1, tzinfo=UTC).replace(tzinfo=None)},
        )
    engine.dispose()
    with Store(url) as store:
        call = ToolCall(name="add", arguments={}, id="new")
        result = ToolResult(call_id="new", server="basic")
        at = datetime(2025, 1, 2, tzinfo=UTC)
        store.log_tool_call(ToolCallLogEntry.from_result(call, result, started_at=at, caller="gateway"))
        [add] = store.tool_stats()
    assert (add.calls, add.callers) == (2, {"agent": 1, "gateway": 1})
