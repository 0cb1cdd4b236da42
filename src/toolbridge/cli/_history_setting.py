"""Whether `ask` and `chat` store their chats: `toolbridge history off|on` (llm's `logs off|on`).

Kept in `settings.json` in the user data folder, beside the default database (`$TOOLBRIDGE_SETTINGS_FILE`
overrides it): `{"history": false}`. No file, or no such key, means on. `--log` / `-n/--no-log` on
`ask` and `chat` decide for one command.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import platformdirs

from toolbridge._private_file import read_private_json, write_private_file

__all__ = ["SETTINGS_FILE_ENV", "history_is_on", "keeps_chat", "set_history", "settings_file"]

SETTINGS_FILE_ENV = "TOOLBRIDGE_SETTINGS_FILE"


def settings_file() -> Path:
    """`$TOOLBRIDGE_SETTINGS_FILE`, else `settings.json` in the user data folder."""
    override = os.environ.get(SETTINGS_FILE_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("toolbridge")) / "settings.json"


def history_is_on() -> bool:
    """Whether chats are stored unless a command says otherwise. A file that cannot be read is an error
    (a ConfigError saying which): storing chats someone turned off is worse than not answering."""
    return _read().get("history", True) is not False


def keeps_chat(log: bool | None) -> bool:
    """Whether this command stores its chat: `--log` (True) or `--no-log` (False), else the setting."""
    return history_is_on() if log is None else log


def set_history(on: bool) -> None:
    settings = _read()
    settings["history"] = on
    write_private_file(settings_file(), json.dumps(settings, indent=2) + "\n")


def _read() -> dict[str, Any]:
    return read_private_json(
        settings_file(),
        what="the settings file",
        remedy="fix it, or remove it and run `toolbridge history off` again if chats should not be stored",
    )
