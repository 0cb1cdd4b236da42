"""What the HTTP adapters share: their endpoint and key, request defaults, one SDK client per event loop."""

from __future__ import annotations

import asyncio
import os
import weakref
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Generic, Protocol, TypeVar

from pydantic import SecretStr

from toolbridge.errors import ConfigError
from toolbridge.models._errors import Endpoint
from toolbridge.models.base import Model, ModelEvent, ModelRequest, ModelSettings, ToolMode
from toolbridge.models.profiles import ProviderProfile

__all__ = ["HttpModel", "LoopLocal", "first_set", "resolve_api_key"]


class _Closable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT")
SdkClientT = TypeVar("SdkClientT", bound=_Closable)


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


class HttpModel(Model, Generic[SdkClientT]):
    """A model behind an HTTP API with an SDK client: the endpoint, its key (kept out of every repr and
    log), request defaults, and one client per event loop. Adapters add the wire format."""

    def __init__(
        self,
        model_id: str,
        *,
        profile: ProviderProfile,
        name: str,
        base_url: str,
        api_key: str | None,
        api_key_from: str | None,
        tool_mode: ToolMode,
        settings: ModelSettings | None,
        max_retries: int,
        timeout: float | None,
        headers: Mapping[str, str] | None,
    ) -> None:
        self.profile = profile
        self.model_id = model_id
        self.name = name
        self.base_url = base_url.rstrip("/")
        key, key_from = resolve_api_key(profile, api_key, api_key_from, name)
        self._api_key = SecretStr(key)
        self.settings = settings or ModelSettings()
        self.max_retries = max_retries
        self.timeout = timeout
        self._headers = dict(headers or {})
        self.tool_mode = tool_mode
        self._endpoint = Endpoint(name, model_id, self.base_url, profile, max_retries, key_from)
        self._clients: LoopLocal[SdkClientT] = LoopLocal(self._new_client)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, provider={self.profile.name!r}, "
            f"model_id={self.model_id!r}, base_url={self.base_url!r}, tool_mode={self.tool_mode!r})"
        )

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        return self._stream(request)

    async def aclose(self) -> None:
        """Close the HTTP client used on the current event loop."""
        client = self._clients.pop()
        if client is not None:
            await client.close()

    @abstractmethod
    def _stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]: ...

    @abstractmethod
    def _new_client(self) -> SdkClientT: ...
