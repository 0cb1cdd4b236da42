"""Storage: agents, chats and their messages, and the tool-call log, in SQLite or any SQLAlchemy database.

    store = Store(resolve_database_url())        # --db, $TOOLBRIDGE_DB, config "database", user data dir
    chat = store.create_chat(agent="default")
    store.append_message(chat.id, UserMessage(content="Hi"))   # committed when it returns
    store.tool_stats(since=parse_since("7d"))
    store.tool_charts(since=parse_since("7d"))  # latency histogram and calls over time, per tool

The schema is migrated with Alembic when a store opens. The store is synchronous: async callers use
`anyio.to_thread.run_sync`.
"""

from toolbridge.store._charts import CallsOverTime, LatencyBucket, LatencyDistribution, ToolCharts
from toolbridge.store._engine import DATABASE_ENV_VAR, default_database_url, resolve_database_url
from toolbridge.store._errors import AgentExistsError, AgentNotFoundError, ChatNotFoundError, StoreError
from toolbridge.store._records import (
    AgentRecord,
    ChatSummary,
    StoredMessage,
    ToolCallLogEntry,
    ToolCallStatus,
    ToolStats,
)
from toolbridge.store._stats import parse_since, percentile
from toolbridge.store.agents import agent_definitions, find_agent_definition
from toolbridge.store.recorder import RunRecorder
from toolbridge.store.store import Store

__all__ = [
    "DATABASE_ENV_VAR",
    "AgentExistsError",
    "AgentNotFoundError",
    "AgentRecord",
    "CallsOverTime",
    "ChatNotFoundError",
    "ChatSummary",
    "LatencyBucket",
    "LatencyDistribution",
    "RunRecorder",
    "Store",
    "StoreError",
    "StoredMessage",
    "ToolCallLogEntry",
    "ToolCallStatus",
    "ToolCharts",
    "ToolStats",
    "agent_definitions",
    "default_database_url",
    "find_agent_definition",
    "parse_since",
    "percentile",
    "resolve_database_url",
]
