"""Storage: agents, chats and their messages, and the tool-call log, in SQLite or any SQLAlchemy database.

    store = Store(resolve_database_url())        # --db, $TOOLBRIDGE_DB, config "database", user data dir
    chat = store.create_chat(agent="default")
    store.append_message(chat.id, UserMessage(content="Hi"))   # committed when it returns
    store.tool_stats(since=parse_since("7d"))
    store.tool_charts(since=parse_since("7d"))  # latency histogram and calls over time, per tool
    key, record = store.users.create_key("alice")   # users and API keys (`toolbridge.store.users`)

The schema is migrated with Alembic when a store opens. The store is synchronous: async callers use
`anyio.to_thread.run_sync`.

SQLAlchemy and Alembic come with the `store` extra (`pip install 'toolbridge[store]'`, which `serve` and
`gateway` include): the names that need them are imported when first used, and raise `MissingExtraError`
without it. The agent catalog (`find_agent`, `agent_catalog`), the records and `CallLog` need neither,
so `ask` and `chat` run without a store (and then keep no history).
"""

import importlib
from typing import TYPE_CHECKING, Any

from toolbridge._extras import require

if TYPE_CHECKING:
    from toolbridge.store._charts import CallsOverTime, LatencyBucket, LatencyDistribution, ToolCharts
    from toolbridge.store._engine import DATABASE_ENV_VAR, default_database_url, resolve_database_url
    from toolbridge.store._errors import (
        AgentExistsError,
        AgentNotFoundError,
        ChatNotFoundError,
        InvalidAgentError,
        RunNotOwnedError,
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
    "RunNotOwnedError",
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

_HOMES = {
    "AgentExistsError": "_errors",
    "AgentNotFoundError": "_errors",
    "AgentRecord": "_records",
    "AgentSource": "agents",
    "ApiKeyRecord": "users",
    "CallLog": "call_log",
    "CallsOverTime": "_charts",
    "CatalogAgent": "agents",
    "ChatNotFoundError": "_errors",
    "ChatSummary": "_records",
    "DATABASE_ENV_VAR": "_engine",
    "InvalidAgentError": "_errors",
    "KeyNotFoundError": "users",
    "KeyOwner": "users",
    "LatencyBucket": "_charts",
    "LatencyDistribution": "_charts",
    "ModelUsage": "users",
    "RunNotOwnedError": "_errors",
    "SchemaDamagedError": "_errors",
    "Store": "store",
    "StoreError": "_errors",
    "StoreHealth": "_records",
    "StoredMessage": "_records",
    "TokenCount": "users",
    "ToolCallLogEntry": "_records",
    "ToolCallStatus": "_records",
    "ToolCaller": "_records",
    "ToolCharts": "_charts",
    "ToolStats": "_records",
    "UserDirectory": "users",
    "UserExistsError": "users",
    "UserNotFoundError": "users",
    "UserRecord": "users",
    "agent_catalog": "agents",
    "check_agent": "agents",
    "default_database_url": "_engine",
    "find_agent": "agents",
    "parse_since": "_stats",
    "percentile": "_stats",
    "resolve_agent_model": "agents",
    "resolve_database_url": "_engine",
}
"""Where each name lives: its module is imported when the name is first used."""

_DATABASE_MODULES = {"_charts", "_engine", "_stats", "store", "users"}
"""The modules built on SQLAlchemy (and Alembic)."""
_DATABASE_FEATURE = "The database (chat history, stored agents, users, the tool-call log)"


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'toolbridge.store' has no attribute {name!r}")
    if home in _DATABASE_MODULES:
        require("sqlalchemy", "store", _DATABASE_FEATURE)
        require("alembic", "store", _DATABASE_FEATURE, load=False)  # imported only to migrate
    return getattr(importlib.import_module(f"toolbridge.store.{home}"), name)
