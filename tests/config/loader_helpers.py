"""Shared by the loader's tests: writing a config file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path
