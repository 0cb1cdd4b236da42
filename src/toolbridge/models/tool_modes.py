"""Remembering which endpoints reject native tools, so the next run starts in prompt mode directly.

With `tool_mode: auto`, `AutoToolsModel` sends tools natively; when the endpoint answers with
`ToolsNotSupportedError`, it goes on in prompt mode and calls `remember_prompt_mode(model)`, and the
next run asks `remembered_tool_mode` before its first request. The model itself is never changed: it is
shared by every chat that uses it. The memory is a small JSON file in the
user cache dir (`$TOOLBRIDGE_CACHE_DIR` overrides it), keyed by base URL and model id: the same model id
on another server may well support tools. The file is read and written in a worker thread, never on the
event loop.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import platformdirs

from toolbridge.models.base import Model
from toolbridge.types import ToolMode

__all__ = [
    "CACHE_DIR_ENV_VAR",
    "cache_dir",
    "endpoint_of",
    "forget_tool_mode",
    "memory_key",
    "remember_prompt_mode",
    "remembered_tool_mode",
]

CACHE_DIR_ENV_VAR = "TOOLBRIDGE_CACHE_DIR"
_FILENAME = "tool_modes.json"

logger = logging.getLogger("toolbridge.models")


def cache_dir() -> Path:
    override = os.environ.get(CACHE_DIR_ENV_VAR, "").strip()
    return Path(override).expanduser() if override else Path(platformdirs.user_cache_dir("toolbridge"))


def memory_key(base_url: str, model_id: str) -> str:
    return f"{base_url.rstrip('/')}#{model_id}"


async def remembered_tool_mode(base_url: str, model_id: str) -> ToolMode | None:
    """`prompt` if this endpoint was seen rejecting tools, else None."""
    entry = (await anyio.to_thread.run_sync(_read)).get(memory_key(base_url, model_id))
    if isinstance(entry, dict) and entry.get("tool_mode") == "prompt":
        return "prompt"
    return None


async def remember_prompt_mode(model: Model, reason: str = "") -> None:
    """Remember that `model`'s endpoint rejects native tools, so later runs start in prompt mode (a
    model with no endpoint to key it by, like `demo`, is not remembered)."""
    key = _key_of(model)
    if key is None:
        return
    since = datetime.now(UTC).isoformat(timespec="seconds")
    entry = {"tool_mode": "prompt", "since": since, **({"reason": reason} if reason else {})}
    await anyio.to_thread.run_sync(_update, key, entry)


async def forget_tool_mode(model: Model) -> None:
    """Drop what was remembered for `model` (e.g. after the server gained tool support)."""
    key = _key_of(model)
    if key is not None:
        await anyio.to_thread.run_sync(_update, key, None)


def _update(key: str, entry: dict[str, Any] | None) -> None:
    entries = _read()
    if entry is not None:
        entries[key] = entry
    elif entries.pop(key, None) is None:
        return
    _write(entries)


def endpoint_of(model: Model) -> tuple[str, str] | None:
    """The base URL and model id a memory entry is keyed by; None for a model with no endpoint (demo)."""
    base_url = getattr(model, "base_url", None)
    model_id = getattr(model, "model_id", None)
    if isinstance(base_url, str) and isinstance(model_id, str):
        return base_url, model_id
    return None


def _key_of(model: Model) -> str | None:
    endpoint = endpoint_of(model)
    return memory_key(*endpoint) if endpoint is not None else None


def _read() -> dict[str, Any]:
    path = cache_dir() / _FILENAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        # A cache is never worth failing a run for: start over.
        logger.warning("ignoring unreadable tool-mode cache %s: %s", path, error)
        return {}
    return data if isinstance(data, dict) else {}


def _write(entries: dict[str, Any]) -> None:
    directory = cache_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a concurrent reader never sees half a file.
        with tempfile.NamedTemporaryFile(
            "w", encoding="utf-8", dir=directory, prefix=".tool_modes.", suffix=".tmp", delete=False
        ) as handle:
            json.dump(entries, handle, indent=2, sort_keys=True)
        os.replace(handle.name, directory / _FILENAME)
    except OSError as error:
        logger.warning("could not save the tool-mode cache in %s: %s", directory, error)
