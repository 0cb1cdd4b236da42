"""Where a model lives and how to reach it: a `Provider`.

A provider holds the base URL, the API key (kept out of every repr and log), extra headers, the
timeout, the retry budget and, optionally, an HTTP client of the user's own. A model holds the model id
and the wire format, and takes a provider:

```python
import httpx2
from toolbridge.models import OpenAIChatModel, Provider

client = httpx2.AsyncClient(proxy="http://proxy.internal:3128")
provider = Provider("vllm", base_url="http://gpu-box:8000/v1", http_client=client)
model = OpenAIChatModel("qwen3-32b", provider=provider)
```

The `openai` and `anthropic` SDKs are built on `httpx2`, so that is the client to pass. Without one,
each event loop gets a client of its own (a connection pool belongs to the loop that opened it), which
`Model.aclose()` closes; a client the user passed is used as is and never closed by toolbridge.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import httpx2
from pydantic import SecretStr

from toolbridge.errors import ConfigError
from toolbridge.models.provider_keys import STORED_KEY_SOURCE, stored_provider_key
from toolbridge.models.provider_profiles import DEFAULT_MAX_RETRIES, ProviderProfile, find_profile

__all__ = ["Provider"]


class Provider:
    """An endpoint of a provider family (`profile`): OpenAI, DeepSeek, a local vLLM, Anthropic, ...

    `base_url` defaults to the profile's; `api_key` to the profile's environment variable, then to the
    key stored with `toolbridge provider-keys set` (local servers need none). `timeout` is seconds per request; `max_retries` how often the SDK retries a
    429, a 5xx or a dropped connection. `http_client`: an `httpx2.AsyncClient` to send requests
    through (proxies, certificates, a custom transport); toolbridge never closes it.
    """

    def __init__(
        self,
        profile: str | ProviderProfile = "openai",
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_from: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx2.AsyncClient | None = None,
        used_by: str | None = None,
    ) -> None:
        """`api_key_from` says in words where the key came from, for error messages. `used_by` names
        what needs this provider in errors (`model 'fast'`); by default the provider itself."""
        self.profile = _profile(profile)
        label = used_by or f"provider {self.profile.name!r}"
        url = base_url or self.profile.base_url
        if not url:
            raise ConfigError(
                f"{label}: provider {self.profile.name!r} has no default address; "
                'set "base_url" (e.g. "http://127.0.0.1:8000/v1")',
                key="base_url",
            )
        self.base_url = url.rstrip("/")
        key, self.api_key_from = _resolve_api_key(self.profile, api_key, api_key_from, label)
        self._api_key = SecretStr(key)
        self.headers: dict[str, str] = dict(headers or {})
        self.timeout = timeout
        self.max_retries = max_retries
        if http_client is not None and not isinstance(http_client, httpx2.AsyncClient):
            raise ConfigError(
                f"{label}: http_client must be an httpx2.AsyncClient (the openai and anthropic SDKs are "
                f"built on httpx2), not {type(http_client).__module__}.{type(http_client).__qualname__}",
                key="http_client",
            )
        self.http_client = http_client

    @property
    def api_key(self) -> str:
        return self._api_key.get_secret_value()

    @property
    def owns_http_client(self) -> bool:
        """Whether toolbridge makes (and closes) the HTTP clients, rather than using the user's."""
        return self.http_client is None

    def __repr__(self) -> str:
        return f"Provider({self.profile.name!r}, base_url={self.base_url!r})"


def _profile(profile: str | ProviderProfile) -> ProviderProfile:
    if isinstance(profile, ProviderProfile):
        return profile
    found = find_profile(profile)
    if found is None:
        raise ConfigError(f"unknown provider {profile!r}", key="provider")
    return found


def _resolve_api_key(
    profile: ProviderProfile, api_key: str | None, api_key_from: str | None, label: str
) -> tuple[str, str]:
    """The key to send, and where it came from in words (for error messages; never the key itself):
    the config's `api_key`, the profile's environment variable, then the key stored with
    `toolbridge provider-keys set`."""
    if api_key:
        return api_key, api_key_from or "the configured api_key"
    env = profile.api_key_env
    from_env = os.environ.get(env, "").strip() if env else ""
    if from_env:
        return from_env, f"the {env} environment variable"
    stored = stored_provider_key(profile.name)
    if stored:
        return stored, STORED_KEY_SOURCE
    store_it = f"`toolbridge provider-keys set {profile.name}`"
    if profile.api_key_required:
        raise ConfigError(
            f"{label} needs an API key: store one with {store_it}, set the {env} environment variable, "
            f'or write "api_key": "${{{env}}}" in the model\'s config',
            key="api_key",
        )
    # Never leave the key to the SDK: openai's would send $OPENAI_API_KEY to whatever server this is.
    where = (
        f"the {env} environment variable or {store_it} (optional here)" if env else "the configured api_key"
    )
    return profile.placeholder_api_key, where
