"""The one base of the HTTP adapters: a `Provider`, request defaults, one SDK client per event loop,
and the stream's life (send the body, translate the SDK's errors, close the response however the
reader leaves). An adapter adds its wire format: the body, the events, and its SDK's error types."""

from __future__ import annotations

import weakref
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import anyio
from anyio.lowlevel import current_token

from toolbridge.errors import ConfigError, ModelError
from toolbridge.models._errors import Endpoint
from toolbridge.models.base import Model, ModelEvent, ModelRequest, ModelSettings
from toolbridge.models.provider import Provider
from toolbridge.models.provider_profiles import ProviderProfile
from toolbridge.types import ToolModeSetting

__all__ = ["HttpModel", "LoopLocal", "first_set", "provider_of"]


class _Closable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT")
SdkClientT = TypeVar("SdkClientT", bound=_Closable)
SdkStreamT = TypeVar("SdkStreamT", bound=_Closable)


class LoopLocal(Generic[ClientT]):
    """One value per running event loop, under any anyio backend (asyncio, trio).

    An HTTP connection pool belongs to the loop that opened its connections; a model used from
    successive `anyio.run`s (the sync wrappers) needs a fresh client on each loop.
    """

    def __init__(self, make: Callable[[], ClientT]) -> None:
        self._make = make
        self._values: weakref.WeakKeyDictionary[object, ClientT] = weakref.WeakKeyDictionary()

    def get(self) -> ClientT:
        loop = current_token().native_token
        value = self._values.get(loop)
        if value is None:
            value = self._values[loop] = self._make()
        return value

    def pop(self) -> ClientT | None:
        return self._values.pop(current_token().native_token, None)


def first_set(*values: Any) -> Any:
    return next((value for value in values if value is not None), None)


def provider_of(given: Provider | ProviderProfile, model_name: str, **endpoint: Any) -> Provider:
    """The provider a model was given, or one made from the profile and the endpoint settings given
    beside it (`base_url`, `api_key`, ...; None means unset)."""
    settings = {key: value for key, value in endpoint.items() if value is not None}
    if not isinstance(given, Provider):
        return Provider(given, **settings, used_by=f"model {model_name!r}")
    if settings:
        raise ConfigError(
            f"model {model_name!r}: {', '.join(settings)} belong to the Provider it was given; set them there",
            key="provider",
        )
    return given


class HttpModel(Model, Generic[SdkClientT, SdkStreamT]):
    """A model behind an HTTP API reached through its vendor's SDK."""

    sdk_error: ClassVar[type[Exception]]
    """The root of the SDK's exceptions; what escapes the SDK is translated into `ModelError`s."""

    def __init__(
        self,
        model_id: str,
        *,
        provider: Provider,
        name: str,
        tool_mode: ToolModeSetting,
        settings: ModelSettings | None,
    ) -> None:
        self.provider = provider
        self.model_id = model_id
        self.name = name
        self.settings = settings or ModelSettings()
        self.tool_mode = tool_mode
        self._endpoint = Endpoint(
            name, model_id, self.base_url, self.profile, provider.max_retries, provider.api_key_from
        )
        self._clients: LoopLocal[SdkClientT] = LoopLocal(self._new_client)

    @property
    def profile(self) -> ProviderProfile:
        return self.provider.profile

    @property
    def base_url(self) -> str:
        return self.provider.base_url

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, provider={self.profile.name!r}, "
            f"model_id={self.model_id!r}, base_url={self.base_url!r}, tool_mode={self.tool_mode!r})"
        )

    @asynccontextmanager
    async def stream(self, request: ModelRequest) -> AsyncIterator[AsyncIterator[ModelEvent]]:
        body = self.request_json(request)
        sent_tools = bool(request.tools)
        try:
            raw = await self._send(self._clients.get(), body)
        except self.sdk_error as error:
            raise self._model_error(error, sent_tools) from error
        events = self._events(raw, sent_tools)
        try:
            yield events
        finally:
            # Shielded: closing the response is what tells the server to stop generating, also when
            # the reader was cancelled.
            with anyio.CancelScope(shield=True):
                await events.aclose()
                await raw.close()

    async def aclose(self) -> None:
        """Close the HTTP client used on the current event loop (not one the user passed in)."""
        client = self._clients.pop()
        if client is not None and self.provider.owns_http_client:
            await client.close()

    @abstractmethod
    def request_json(self, request: ModelRequest) -> bytes:
        """The request's body as sent: JSON, with the model id and `stream: true`."""

    @abstractmethod
    def _new_client(self) -> SdkClientT: ...

    @abstractmethod
    async def _send(self, client: SdkClientT, body: bytes) -> SdkStreamT:
        """POST the body and return the SDK's stream of parsed events (status errors raise here)."""

    @abstractmethod
    def _events(self, raw: SdkStreamT, sent_tools: bool) -> AsyncGenerator[ModelEvent]:
        """The SDK's events as ours; SDK errors in the middle of the stream become `ModelError`s."""

    @abstractmethod
    def _model_error(self, error: Any, sent_tools: bool) -> ModelError: ...
