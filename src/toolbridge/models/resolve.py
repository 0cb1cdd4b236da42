"""From a model name to a `Model`: the config's `models` section, inline `provider:model`, or defaults.

```json
{
  "models": {
    "fast": {"provider": "deepseek", "model": "deepseek-chat", "api_key": "${DEEPSEEK_API_KEY}",
             "tool_mode": "auto", "temperature": 0.2, "max_tokens": 2048}
  },
  "default_model": "fast"
}
```

`resolve_model(name, config)` looks `name` up in that order: `demo` (the built-in stand-in), a model named
in the config, `provider:model` (`openai:gpt-4o-mini`, `ollama:qwen3:8b`, `anthropic:claude-sonnet-4-5`),
a bare `ollama` (whichever model it has). With no name: `default_model`, the only configured model, then
`$OPENAI_API_KEY` / `$OPENAI_BASE_URL`, then a key stored for openai (`toolbridge provider-keys set
openai`), then a local Ollama if one answers. Otherwise a `ConfigError` shows how to configure one. The demo is never chosen unless named. From async code use
`resolve_model_async`: the probes wait on the network, and must not stop the event loop meanwhile.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import httpx2

from toolbridge._extras import require
from toolbridge.config import Config, ModelConfig
from toolbridge.errors import ConfigError
from toolbridge.models.base import Model, ModelSettings
from toolbridge.models.demo import DemoModel
from toolbridge.models.provider_keys import stored_provider_key
from toolbridge.models.provider_profiles import (
    DEFAULT_MAX_RETRIES,
    PROFILES,
    find_profile,
    ollama_host,
    provider_names,
)
from toolbridge.parsing import dialect_names

if TYPE_CHECKING:
    from toolbridge.models.openai import OpenAIChatModel

# The SDK adapters are imported where a model is built: importing `anthropic` alone takes seconds,
# and a run uses one provider at most. Each SDK is an extra (`toolbridge[openai]`, `toolbridge[anthropic]`):
# without it, choosing such a model says what to install (`demo` needs neither).

__all__ = [
    "DEFAULT_OPENAI_MODEL",
    "ModelConfig",
    "build_model",
    "find_ollama_model",
    "model_configs",
    "model_name_problem",
    "no_model_message",
    "resolve_model",
    "resolve_model_async",
]

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DEMO = "demo"
_PROBE_TIMEOUT = 0.5
# Families whose Ollama templates support tools, most capable first; an Ollama model list is matched
# against them so the pick can actually call tools.
_OLLAMA_TOOL_FAMILIES = (
    "qwen3",
    "gpt-oss",
    "qwen2.5",
    "llama3.3",
    "llama3.2",
    "llama3.1",
    "mistral",
    "granite",
    "command-r",
    "hermes",
)


def model_configs(config: Config) -> dict[str, ModelConfig]:
    """The config's `models` section, each entry's provider and dialect checked; errors name the file
    and the key."""
    path = str(config.path) if config.path else None
    for name, entry in config.models.items():
        if entry.provider.strip().lower() != DEMO and find_profile(entry.provider) is None:
            providers = ", ".join([*provider_names(), DEMO])
            raise ConfigError(
                f"model {name!r}: unknown provider {entry.provider!r}; use one of {providers}",
                path=path,
                key=f"models.{name}.provider",
            )
        if entry.dialect is not None and entry.dialect not in dialect_names():
            raise ConfigError(
                f"model {name!r}: unknown dialect {entry.dialect!r}; use one of {', '.join(dialect_names())} "
                "(`toolbridge parse --formats` describes them)",
                path=path,
                key=f"models.{name}.dialect",
            )
    return dict(config.models)


def build_model(
    name: str, settings: ModelConfig, *, path: str | None = None, from_config: bool = True
) -> Model:
    """The model a config entry describes. `name` is how the user refers to it; errors name the entry's
    keys unless it was written inline (`from_config=False`)."""
    model = _model_of(name, settings, path=path, from_config=from_config)
    model.dialect = settings.dialect
    if settings.tool_search is not None:
        model.tool_search = settings.tool_search
    model.reasoning_open = settings.reasoning_open
    return model


def _model_of(name: str, settings: ModelConfig, *, path: str | None, from_config: bool) -> Model:
    if settings.provider.strip().lower() == DEMO:
        return DemoModel(name=name, tool_mode=settings.tool_mode)
    profile = find_profile(settings.provider)
    # Both validated by ModelConfig.
    assert profile is not None
    assert settings.model
    options: dict[str, Any] = {
        "name": name,
        "base_url": settings.base_url,
        "api_key": settings.api_key.get_secret_value() if settings.api_key else None,
        "api_key_from": f"models.{name}.api_key in {path or 'the config'}" if settings.api_key else None,
        "tool_mode": settings.tool_mode,
        "settings": ModelSettings(temperature=settings.temperature, max_tokens=settings.max_tokens),
        "max_retries": DEFAULT_MAX_RETRIES if settings.max_retries is None else settings.max_retries,
        "timeout": settings.timeout,
        "headers": settings.headers,
    }
    try:
        if profile.wire == "anthropic":
            require("anthropic", "anthropic", f"The model {name!r} (Claude, through Anthropic's API)")
            from toolbridge.models.anthropic import AnthropicModel

            return AnthropicModel(settings.model, profile=profile, **options)
        require("openai", "openai", f"The model {name!r} (an OpenAI-compatible endpoint)")
        from toolbridge.models.openai import OpenAIChatModel

        return OpenAIChatModel(settings.model, provider=profile, **options)
    except ConfigError as error:
        if not from_config:
            raise
        where = f"{error.key}: " if error.key else ""
        raise ConfigError(
            str(error).removeprefix(where), path=path, key=f"models.{name}.{error.key or 'provider'}"
        ) from error


def resolve_model(name: str | None = None, config: Config | None = None) -> Model:
    """The model `name` refers to, or the default one (see the module docstring for the order)."""
    config = config or Config()
    path = str(config.path) if config.path else None
    configs = model_configs(config)
    if name is None or not name.strip():
        default = config.default_model
        if default is not None and not default.strip():
            raise ConfigError('expected the name of a model, e.g. "fast"', path=path, key="default_model")
        name = default
        if name is None and len(configs) == 1:
            name = next(iter(configs))
        if name is None:
            return _model_from_environment()
    name = name.strip()
    if name in configs:
        config.check_resolved(f"models.{name}", used_by=f"model {name!r}")
        return build_model(name, configs[name], path=path)
    if name == DEMO:
        return DemoModel()
    provider, colon, model_id = name.partition(":")
    profile = find_profile(provider)
    if colon and profile is not None and model_id.strip():
        inline = ModelConfig(provider=profile.name, model=model_id.strip())
        return build_model(name, inline, from_config=False)
    if profile is not None and profile.name == "ollama":
        found = find_ollama_model()
        if found is not None:
            return found
        raise ConfigError(
            f"no Ollama answers at {ollama_host()}: start it with `ollama serve`, or set OLLAMA_HOST"
        )
    raise ConfigError(_unknown_model_message(name, list(configs)), path=path)


def model_name_problem(name: str, config: Config) -> str | None:
    """Why `name` names no model `resolve_model` could build (None: it does), without building it."""
    name = name.strip()
    if name in config.models or name == DEMO:
        return None
    provider, colon, model_id = name.partition(":")
    profile = find_profile(provider)
    if profile is not None and (model_id.strip() if colon else profile.name == "ollama"):
        return None
    return _unknown_model_message(name, list(config.models))


async def resolve_model_async(name: str | None = None, config: Config | None = None) -> Model:
    """`resolve_model` for async code. It may probe a local Ollama or a server's model list and read
    the tool-mode memory: that runs in a worker thread, so the event loop keeps serving meanwhile, and
    cancelling stops the wait at once."""
    return await anyio.to_thread.run_sync(partial(resolve_model, name, config), abandon_on_cancel=True)


def _model_from_environment() -> Model:
    api_key = os.environ.get("OPENAI_API_KEY", "").strip()
    base_url = os.environ.get("OPENAI_BASE_URL", "").strip()
    if api_key or base_url:
        require("openai", "openai", "The default model (from $OPENAI_API_KEY or $OPENAI_BASE_URL)")
        from toolbridge.models.openai import OpenAIChatModel

        model_id = os.environ.get("OPENAI_MODEL", "").strip()
        if base_url:  # another OpenAI-compatible server: its own dialect, and its own model ids
            model_id = model_id or _first_listed_model(base_url, api_key) or DEFAULT_OPENAI_MODEL
            return OpenAIChatModel(
                model_id,
                provider=PROFILES["openai-compatible"],
                base_url=base_url,
                api_key=api_key or None,
                api_key_from="the OPENAI_API_KEY environment variable",
            )
        return OpenAIChatModel(model_id or DEFAULT_OPENAI_MODEL, provider="openai")
    if stored_provider_key("openai"):  # `toolbridge provider-keys set openai`, as `llm keys set openai`
        require("openai", "openai", "The default model (from the key stored for openai)")
        from toolbridge.models.openai import OpenAIChatModel

        model_id = os.environ.get("OPENAI_MODEL", "").strip()
        return OpenAIChatModel(model_id or DEFAULT_OPENAI_MODEL, provider="openai")
    found = find_ollama_model()
    if found is not None:
        return found
    raise ConfigError(no_model_message())


def find_ollama_model() -> OpenAIChatModel | None:
    """A model of the Ollama at `$OLLAMA_HOST` (default 127.0.0.1:11434), if one answers and has models.

    The pick prefers families that can call tools, in the order Ollama lists them (newest first).
    """
    host = ollama_host()
    try:
        response = httpx2.get(f"{host}/api/tags", timeout=_PROBE_TIMEOUT)
        response.raise_for_status()
        listed = response.json().get("models") or []
    except (httpx2.HTTPError, ValueError, AttributeError):
        return None
    names = [str(entry.get("name") or entry.get("model")) for entry in listed if isinstance(entry, Mapping)]
    names = [n for n in names if n and n != "None" and "embed" not in n.lower()]
    if not names:
        raise ConfigError(
            f"Ollama answers at {host} but has no chat models: fetch one with `ollama pull qwen3`, "
            "or configure another model (see `--model`)"
        )
    chosen = next((n for family in _OLLAMA_TOOL_FAMILIES for n in names if n.startswith(family)), names[0])
    require("openai", "openai", f"The local Ollama's model {chosen!r}")
    from toolbridge.models.openai import OpenAIChatModel

    return OpenAIChatModel(chosen, provider="ollama", base_url=f"{host}/v1")


def _first_listed_model(base_url: str, api_key: str) -> str | None:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        response = httpx2.get(f"{base_url.rstrip('/')}/models", headers=headers, timeout=_PROBE_TIMEOUT)
        response.raise_for_status()
        data = response.json().get("data") or []
    except (httpx2.HTTPError, ValueError, AttributeError):
        return None
    ids = [entry.get("id") for entry in data if isinstance(entry, Mapping)]
    return next((model_id for model_id in ids if isinstance(model_id, str) and model_id), None)


def no_model_message() -> str:
    """What to do when no model is configured and none was found."""
    return f"""no model is configured, no OpenAI key is set or stored, and no Ollama answers at {ollama_host()}.
Configure a model in one of these ways:
  1. A "models" section in toolbridge.json (in this directory, or the file given with --config):
       {{
         "models": {{
           "fast": {{"provider": "openai", "model": "gpt-4o-mini", "api_key": "${{OPENAI_API_KEY}}"}}
         }},
         "default_model": "fast"
       }}
     providers: {", ".join(provider_names())}
  2. An OpenAI key: `toolbridge provider-keys set openai` stores one (or set OPENAI_API_KEY; plus
     OPENAI_BASE_URL for another OpenAI-compatible server, and OPENAI_MODEL for its model id).
  3. A local Ollama: install it, run `ollama pull qwen3`, and keep `ollama serve` running
     (set OLLAMA_HOST if it is not on 127.0.0.1:11434).
  4. Name one each time: --model openai:gpt-4o-mini, --model ollama:qwen3, --model anthropic:claude-sonnet-4-5
To see toolbridge work without any model, use the built-in rule-based stand-in: --model demo"""


def _unknown_model_message(name: str, configured: list[str]) -> str:
    provider, colon, _ = name.partition(":")
    if colon and find_profile(provider) is None:
        problem = f"unknown provider {provider!r} in model {name!r}; providers: {', '.join(provider_names())}"
    elif colon or find_profile(name) is not None:
        problem = f"model {name!r} names no model id; write it as provider:model, e.g. {provider or name}:<model id>"
    else:
        known = f"configured models: {', '.join(configured)}" if configured else "no models are configured"
        problem = f"no model named {name!r} ({known})"
    return (
        f"{problem}. Use a configured name, provider:model (e.g. openai:gpt-4o-mini, ollama:qwen3), or demo"
    )
