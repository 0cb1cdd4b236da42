"""Providers' API keys stored by `toolbridge provider-keys set NAME`, as `llm keys set` stores them.

One JSON file, `provider-keys.json` in the user data folder (`$TOOLBRIDGE_KEYS_FILE` overrides it),
readable by its owner only: `{"openai": "sk-...", "deepseek": "..."}`, keyed by the provider's name
(`provider_profiles`). A `Provider` uses a stored key last: after the config entry's `api_key` and the
provider's environment variable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import platformdirs

from toolbridge._private_file import read_private_json, write_private_file
from toolbridge.errors import ConfigError
from toolbridge.models.provider_profiles import ProviderProfile, find_profile, provider_names

__all__ = [
    "KEYS_FILE_ENV",
    "STORED_KEY_SOURCE",
    "known_provider",
    "masked",
    "provider_keys_file",
    "remove_provider_key",
    "store_provider_key",
    "stored_provider_key",
    "stored_provider_keys",
]

KEYS_FILE_ENV = "TOOLBRIDGE_KEYS_FILE"
STORED_KEY_SOURCE = "the key stored by `toolbridge provider-keys`"
"""Where a key came from, in words, when it came from this file (never the key itself)."""
_NOTE_KEY = "//"
_NOTE = "API keys of model providers, kept by `toolbridge provider-keys`. Secret: do not share this file."


def provider_keys_file() -> Path:
    """`$TOOLBRIDGE_KEYS_FILE`, else `provider-keys.json` in the user data folder (beside the database)."""
    override = os.environ.get(KEYS_FILE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("toolbridge")) / "provider-keys.json"


def known_provider(name: str) -> ProviderProfile:
    """The provider `name` (or an alias of one: `claude`) names; a ConfigError listing them if none."""
    profile = find_profile(name)
    if profile is None:
        raise ConfigError(f"unknown provider {name!r}; providers: {', '.join(provider_names())}")
    return profile


def stored_provider_keys() -> dict[str, str]:
    """Every stored key by provider name. Raises ConfigError when the file cannot be read, rather than
    acting as if it were empty (a `set` would then write over the keys in it)."""
    raw = read_private_json(
        provider_keys_file(),
        what="the provider keys file",
        remedy="fix it, or remove it and store the keys again with `toolbridge provider-keys set NAME`",
    )
    return {
        name: key for name, key in raw.items() if name != _NOTE_KEY and isinstance(key, str) and key.strip()
    }


def stored_provider_key(provider: str) -> str | None:
    """The key stored for `provider` (a profile's name), if any."""
    if not provider_keys_file().exists():  # the usual case: nothing to parse
        return None
    return stored_provider_keys().get(provider)


def store_provider_key(provider: str, key: str) -> str:
    """Store `key` for `provider` (a name or alias), replacing any; the provider's name it is kept under.
    Raises ConfigError for an unknown provider or a key no API would take (blank, with spaces inside)."""
    profile = known_provider(provider)
    key = key.strip()
    if not key:
        raise ConfigError(f"the key for {profile.name} is empty; nothing was stored")
    if any(character.isspace() or not character.isprintable() for character in key):
        raise ConfigError(
            f"the key for {profile.name} has spaces or control characters inside it, which no API key "
            "has; paste the key alone (nothing was stored)"
        )
    keys = stored_provider_keys()
    keys[profile.name] = key
    _write(keys)
    return profile.name


def remove_provider_key(provider: str) -> bool:
    """Forget the key stored for `provider` (a name or alias); False if none was stored."""
    profile = known_provider(provider)
    keys = stored_provider_keys()
    if keys.pop(profile.name, None) is None:
        return False
    _write(keys)
    return True


def masked(key: str) -> str:
    """Enough of a key to tell two apart (its last four characters), never enough to use it."""
    return f"…{key[-4:]}" if len(key) >= 16 else "…"


def _write(keys: dict[str, str]) -> None:
    document = {_NOTE_KEY: _NOTE, **dict(sorted(keys.items()))}
    write_private_file(provider_keys_file(), json.dumps(document, indent=2) + "\n")
