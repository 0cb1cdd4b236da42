"""Storage: agents, chats and their messages, and the tool-call log, in SQLite or any SQLAlchemy database.

    store = Store(resolve_database_url())        # --db, $TOOLBRIDGE_DB, config "database", user data dir
    chat = store.create_chat(agent="default")
    store.append_message(chat.id, UserMessage(content="Hi"))   # committed when it returns
    store.tool_stats(since=parse_since("7d"))
    store.tool_charts(since=parse_since("7d"))  # latency histogram and calls over time, per tool
    key, record = store.users.create_key("alice")   # users and API keys (`toolbridge.store.users`)

The schema is migrated with Alembic when a store opens. The store is synchronous: async callers use
`anyio.to_thread.run_sync`.
"""

from toolbridge.store._charts import CallsOverTime, LatencyBucket, LatencyDistribution, ToolCharts
from toolbridge.store._engine import DATABASE_ENV_VAR, default_database_url, resolve_database_url
from toolbridge.store._errors import (
    AgentExistsError,
    AgentNotFoundError,
    ChatNotFoundError,
    InvalidAgentError,
    SchemaDamagedError,
    StoreError,
)
from toolbridge.store._records import (
    AgentRecord,
    ChatSummary,
    StoredMessage,
    StoreHealth,
    ToolCaller,
    ToolCallLogEntry,
    ToolCallStatus,
    ToolStats,
)
from toolbridge.store._stats import parse_since, percentile
from toolbridge.store.agents import (
    AgentSource,
    CatalogAgent,
    agent_catalog,
    check_agent,
    find_agent,
    resolve_agent_model,
)
from toolbridge.store.call_log import CallLog
from toolbridge.store.store import Store
from toolbridge.store.users import (
    ApiKeyRecord,
    KeyNotFoundError,
    KeyOwner,
    ModelUsage,
    TokenCount,
    UserDirectory,
    UserExistsError,
    UserNotFoundError,
    UserRecord,
)

__all__ = [
    "DATABASE_ENV_VAR",
    "AgentExistsError",
    "AgentNotFoundError",
    "AgentRecord",
    "AgentSource",
    "ApiKeyRecord",
    "CallLog",
    "CallsOverTime",
    "CatalogAgent",
    "ChatNotFoundError",
    "ChatSummary",
    "InvalidAgentError",
    "KeyNotFoundError",
    "KeyOwner",
    "LatencyBucket",
    "LatencyDistribution",
    "ModelUsage",
    "SchemaDamagedError",
    "Store",
    "StoreError",
    "StoreHealth",
    "StoredMessage",
    "TokenCount",
    "ToolCallLogEntry",
    "ToolCallStatus",
    "ToolCaller",
    "ToolCharts",
    "ToolStats",
    "UserDirectory",
    "UserExistsError",
    "UserNotFoundError",
    "UserRecord",
    "agent_catalog",
    "check_agent",
    "default_database_url",
    "find_agent",
    "parse_since",
    "percentile",
    "resolve_agent_model",
    "resolve_database_url",
]
