"""Writing a file only its owner may read: OAuth sign-ins, providers' API keys, settings beside them.

One writer for all of them, so each secret file gets the same care: the folder is made 0700, the file is
written to a temporary name created 0600 (never readable by others, not even for a moment) and renamed
over the old one, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from toolbridge.errors import ConfigError

__all__ = ["read_private_json", "write_private_file"]


def write_private_file(path: Path, text: str) -> None:
    """Replace `path` with `text` (UTF-8), readable and writable by its owner only (mode 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    # A leftover of a crashed writer may have other permissions: O_EXCL makes a new file, with ours.
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def read_private_json(path: Path, *, what: str, remedy: str) -> dict[str, Any]:
    """The JSON object in `path` ({} when there is none). A file that cannot be read, or holds no JSON
    object, is a ConfigError naming `what` it is and the `remedy`, rather than taken for empty (a write
    would then lose what it held)."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ConfigError(f"{what} {path} cannot be read ({reason}); {remedy}") from error
    if not isinstance(found, dict):
        raise ConfigError(f"{what} {path} holds no JSON object; {remedy}")
    return found
