"""Provider profiles: each family's quirks as data, so the adapters stay free of `if provider == ...`.

A profile says where a provider lives (default base URL, API-key variable), which adapter speaks its
wire format, and how its OpenAI-compatible dialect differs: the field its reasoning arrives in, whether
it streams usage when asked, which flavour of JSON Schema its tools take, and so on.
The weights behind an endpoint have profiles of their own (`model_profiles.py`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from toolbridge.prompting import SchemaTarget

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "PROFILES",
    "ProviderProfile",
    "find_profile",
    "ollama_host",
    "provider_names",
]

DEFAULT_MAX_RETRIES = 2
"""Retries of a failed request (429, 5xx, a dropped connection) the SDKs make before giving up."""

Wire = Literal["openai", "anthropic"]

OLLAMA_DEFAULT_HOST = "http://127.0.0.1:11434"


@dataclass(frozen=True)
class ProviderProfile:
    name: str
    wire: Wire
    """Which adapter speaks to it: OpenAI chat completions or Anthropic messages."""
    default_base_url: str | None
    """None: there is no public default, a `base_url` must be configured."""
    api_key_env: str | None
    """The environment variable read for the key when the config gives none."""
    api_key_required: bool = True
    """Local servers take any key (or none); the SDKs still want a non-empty string."""
    placeholder_api_key: str = "not-needed"
    streams_usage: bool = True
    """Send `stream_options.include_usage`. Usage is read whenever a chunk carries it either way."""
    reasoning_fields: tuple[str, ...] = ("reasoning_content", "reasoning")
    """Delta fields carrying reasoning, in order of preference; only the first present one is read,
    because servers migrating between names (vLLM) send the same text under both for a while."""
    sends_reasoning_back: bool = False
    """Include an assistant message's reasoning when sending the conversation back. DeepSeek rejects it;
    Kimi's thinking models want it kept beside their tool calls."""
    schema_target: SchemaTarget = "openai"
    max_tokens_param: str = "max_tokens"
    """OpenAI's newer models take `max_completion_tokens` and reject `max_tokens`."""
    tool_result_images: bool = False
    """Whether images from tool results can be sent as images; otherwise they are described in text."""
    sends_temperature: bool = True
    """Anthropic's current API (and SDK) no longer take sampling parameters."""
    default_max_tokens: int | None = None
    """Sent when nothing else sets it (Anthropic requires `max_tokens`)."""
    start_hint: str = ""
    """What to tell a user whose connection was refused."""

    @property
    def base_url(self) -> str | None:
        """The base URL to use when none is configured (Ollama's honours `$OLLAMA_HOST`)."""
        if self.name == "ollama":
            return ollama_host() + "/v1"
        return self.default_base_url


PROFILES: dict[str, ProviderProfile] = {
    profile.name: profile
    for profile in (
        ProviderProfile(
            name="openai",
            wire="openai",
            default_base_url="https://api.openai.com/v1",
            api_key_env="OPENAI_API_KEY",
            max_tokens_param="max_completion_tokens",
            tool_result_images=True,
        ),
        ProviderProfile(
            name="deepseek",
            wire="openai",
            default_base_url="https://api.deepseek.com",
            api_key_env="DEEPSEEK_API_KEY",
            reasoning_fields=("reasoning_content",),
        ),
        ProviderProfile(
            name="qwen",
            wire="openai",
            default_base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
            api_key_env="DASHSCOPE_API_KEY",
            reasoning_fields=("reasoning_content",),
        ),
        ProviderProfile(
            name="moonshot",
            wire="openai",
            default_base_url="https://api.moonshot.ai/v1",
            api_key_env="MOONSHOT_API_KEY",
            reasoning_fields=("reasoning_content",),
            sends_reasoning_back=True,
        ),
        ProviderProfile(
            name="ollama",
            wire="openai",
            default_base_url=OLLAMA_DEFAULT_HOST + "/v1",
            api_key_env=None,
            placeholder_api_key="ollama",
            reasoning_fields=("reasoning", "reasoning_content"),
            start_hint="start it with `ollama serve` (or set OLLAMA_HOST to where it runs)",
            api_key_required=False,
        ),
        ProviderProfile(
            name="vllm",
            wire="openai",
            default_base_url="http://127.0.0.1:8000/v1",
            api_key_env="VLLM_API_KEY",
            placeholder_api_key="EMPTY",
            reasoning_fields=("reasoning", "reasoning_content"),
            start_hint="start it with `vllm serve <model>`",
            api_key_required=False,
        ),
        ProviderProfile(
            name="lmstudio",
            wire="openai",
            default_base_url="http://127.0.0.1:1234/v1",
            api_key_env="LMSTUDIO_API_KEY",
            placeholder_api_key="lm-studio",
            reasoning_fields=("reasoning", "reasoning_content"),
            start_hint="start LM Studio's server (Developer tab, or `lms server start`)",
            api_key_required=False,
        ),
        ProviderProfile(
            name="llamacpp",
            wire="openai",
            default_base_url="http://127.0.0.1:8080/v1",
            api_key_env="LLAMA_API_KEY",
            streams_usage=False,  # llama-server reports usage in its last chunk unasked
            reasoning_fields=("reasoning_content",),
            start_hint="start it with `llama-server -m <model.gguf> --jinja`",
            api_key_required=False,
        ),
        ProviderProfile(
            name="openai-compatible",
            wire="openai",
            default_base_url=None,
            api_key_env=None,
            api_key_required=False,
        ),
        ProviderProfile(
            name="anthropic",
            wire="anthropic",
            default_base_url="https://api.anthropic.com",
            api_key_env="ANTHROPIC_API_KEY",
            schema_target="anthropic",
            tool_result_images=True,
            sends_temperature=False,
            default_max_tokens=4096,
        ),
    )
}

_ALIASES = {
    "dashscope": "qwen",
    "kimi": "moonshot",
    "lm-studio": "lmstudio",
    "lm_studio": "lmstudio",
    "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp",
    "llama_cpp": "llamacpp",
    "openai_compatible": "openai-compatible",
    "custom": "openai-compatible",
    "claude": "anthropic",
}


def find_profile(provider: str) -> ProviderProfile | None:
    """The profile for a provider name or alias (case-insensitive); None if it is unknown."""
    key = provider.strip().lower()
    return PROFILES.get(_ALIASES.get(key, key))


def provider_names() -> list[str]:
    return sorted(PROFILES)


def ollama_host() -> str:
    """Where Ollama listens, from `$OLLAMA_HOST` as Ollama itself reads it (`host`, `host:port`, or a URL)."""
    value = os.environ.get("OLLAMA_HOST", "").strip().rstrip("/")
    if not value:
        return OLLAMA_DEFAULT_HOST
    scheme, separator, rest = value.partition("://")
    if not separator:
        scheme, rest = "http", value
    host, colon, port = rest.rpartition(":") if rest.count(":") == 1 else (rest, "", "")
    if not colon:
        host, port = rest, "11434"
    if host in ("", "0.0.0.0"):  # a listening address, not one to connect to
        host = "127.0.0.1"
    return f"{scheme}://{host}:{port}"
