"""What the HTTP adapters share: finding the API key, merging settings, one SDK client per event loop."""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from toolbridge.errors import ConfigError
from toolbridge.models.profiles import ProviderProfile

__all__ = ["LoopLocal", "first_set", "resolve_api_key"]

ClientT = TypeVar("ClientT")


class LoopLocal(Generic[ClientT]):
    """One SDK client per running event loop.

    An httpx connection pool belongs to the loop that opened its connections; a model used from
    successive `anyio.run`s (the sync wrappers) needs a fresh client on each loop.
    """

    def __init__(self, make: Callable[[], ClientT]) -> None:
        self._make = make
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ClientT] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> ClientT:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = self._make()
        return client

    def pop(self) -> ClientT | None:
        return self._clients.pop(asyncio.get_running_loop(), None)


def first_set(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def resolve_api_key(
    profile: ProviderProfile, api_key: str | None, api_key_from: str | None, model_name: str
) -> tuple[str, str]:
    """The key to send, and where it came from in words (for error messages; never the key itself)."""
    if api_key:
        return api_key, api_key_from or "the configured api_key"
    env = profile.api_key_env
    from_env = os.environ.get(env, "").strip() if env else ""
    if from_env:
        return from_env, f"the {env} environment variable"
    if profile.api_key_required:
        raise ConfigError(
            f"model {model_name!r} needs an API key: set the {env} environment variable, or "
            f'"api_key": "${{{env}}}" in the model\'s config',
            key="api_key",
        )
    # Never leave the key to the SDK: openai's would send $OPENAI_API_KEY to whatever server this is.
    where = f"the {env} environment variable (optional here)" if env else "the configured api_key"
    return profile.placeholder_api_key, where
