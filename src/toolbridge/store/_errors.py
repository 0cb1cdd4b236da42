"""The store's errors. All derive from `StoreError`, itself a `ToolbridgeError`."""

from __future__ import annotations

from toolbridge.errors import StoreError

__all__ = [
    "AgentExistsError",
    "AgentNotFoundError",
    "ChatNotFoundError",
    "InvalidAgentError",
    "RunNotOwnedError",
    "SchemaDamagedError",
    "StoreError",
]


class AgentNotFoundError(StoreError):
    def __init__(self, name: str, *, known: str | None = None) -> None:
        self.name = name
        if known is None:
            super().__init__(f"no stored agent named {name!r}; `toolbridge agents` lists them")
        else:
            super().__init__(f"no agent named {name!r}; the agents are: {known}")


class AgentExistsError(StoreError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"an agent named {name!r} already exists; pick another name, "
            f"or change it with `toolbridge agents edit {name}`"
        )


class InvalidAgentError(StoreError):
    """An agent to be stored names a model or MCP server the config does not know, or a name the config
    already uses."""


class ChatNotFoundError(StoreError):
    def __init__(self, chat_id: int) -> None:
        self.chat_id = chat_id
        super().__init__(f"no chat with id {chat_id}; `toolbridge history` lists chats")


class RunNotOwnedError(StoreError):
    """A run's message was to be stored by a replica that no longer runs it."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(
            f"run {run_id} is no longer this replica's (it stalled past its lease, and another replica "
            "took the run over or ended it): its messages are that replica's to store"
        )


class SchemaDamagedError(StoreError):
    """A table or column the schema needs is missing (dropped by hand, a half-restored backup)."""

    def __init__(self, url: str, detail: str) -> None:
        super().__init__(
            f"the database schema is damaged ({url}: {detail}); restore the database from a backup, or move "
            "it away (or point --db / $TOOLBRIDGE_DB elsewhere) to start a new one"
        )
