"""The same store on PostgreSQL, by URL alone: migrations, exact round trips, listing and statistics.

The database comes from scripts/install-test-servers (a local PostgreSQL with a `toolbridge_test`
database); `TOOLBRIDGE_TEST_POSTGRES` points elsewhere if needed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine
from store_helpers import (
    EVERY_KIND,
    check_every_outcome,
    log_every_outcome,
    migrate_from_first_schema,
    migrate_log_of_the_third_schema,
)

from toolbridge.agent import AgentDefinition
from toolbridge.store import Store, ToolCallLogEntry
from toolbridge.store._schema import Base
from toolbridge.types import ToolCall, ToolResult, UserMessage


def test_migrations_give_exactly_the_models_schema(pg_url: str) -> None:
    Store(pg_url).close()
    Store(pg_url).close()  # reopening migrates nothing
    engine = create_engine(pg_url)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, Base.metadata) == []
    engine.dispose()


def test_every_message_kind_round_trips_exactly(pg_url: str) -> None:
    with Store(pg_url) as store:
        chat = store.create_chat(agent="helper")
        for message in EVERY_KIND:
            store.append_message(chat.id, message)
    with Store(pg_url) as reopened:
        assert reopened.get_messages(chat.id) == EVERY_KIND
        assert all(entry.created_at.tzinfo is UTC for entry in reopened.get_stored_messages(chat.id))


def test_chats_agents_and_statistics(pg_url: str) -> None:
    with Store(pg_url) as store:
        first = store.create_chat(agent="default")
        store.append_message(first.id, UserMessage(content="First question"))
        second = store.create_chat(agent="default")
        store.append_message(second.id, UserMessage(content="Second question"))
        assert [(c.title, c.message_count) for c in store.list_chats()] == [
            ("Second question", 1),
            ("First question", 1),
        ]

        store.create_agent(AgentDefinition(name="helper", instructions="Be brief.", max_steps=4))
        assert store.get_agent("helper").definition.max_steps == 4
        assert (store.has_agent("helper"), store.has_agent("nobody")) == (True, False)

        started = datetime.now(UTC) - timedelta(minutes=1)
        for duration in range(1, 101):
            call = ToolCall(name="add", arguments={"a": duration})
            result = ToolResult(call_id=call.id, server="basic", duration=float(duration))
            store.log_tool_call(
                ToolCallLogEntry.from_result(call, result, started_at=started, chat_id=first.id)
            )
        [stats] = store.tool_stats()
        assert (stats.tool, stats.server, stats.calls, stats.success_rate) == ("add", "basic", 100, 1.0)
        assert (stats.p50, stats.p95) == (50.5, 95.05)


def test_declined_and_cancelled_calls_are_counted_apart_from_failures(pg_url: str) -> None:
    with Store(pg_url) as store:
        log_every_outcome(store)
        check_every_outcome(store)


def test_timeouts_and_declined_calls_of_the_first_schema_get_their_error_kind(pg_url: str) -> None:
    migrate_from_first_schema(pg_url)


def test_calls_logged_before_callers_were_kept_count_as_the_agents(pg_url: str) -> None:
    migrate_log_of_the_third_schema(pg_url)
