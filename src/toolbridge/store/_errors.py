"""The store's errors. All derive from `StoreError`, itself a `ToolbridgeError`."""

from __future__ import annotations

from toolbridge.errors import StoreError

__all__ = [
    "AgentExistsError",
    "AgentNotFoundError",
    "ChatNotFoundError",
    "InvalidAgentError",
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
