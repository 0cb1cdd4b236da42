"""What toolbridge/_http_client.py relies on in aiohttp beyond its documented API; run before raising
aiohttp's upper bound in pyproject.toml. The behaviour itself is tested over a real socket
(test_http_client)."""

from __future__ import annotations

import inspect
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import aiohttp

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


def test_the_connector_takes_pooled_connections_through_get() -> None:
    get = vars(aiohttp.BaseConnector)["_get"]
    assert inspect.iscoroutinefunction(get)
    assert list(inspect.signature(get).parameters) == ["self", "key", "traces"]
    # connect() asks _get for a pooled connection before it opens a new one.
    assert "await self._get(key, traces)" in inspect.getsource(aiohttp.BaseConnector.connect)


def test_aiohttp_is_within_the_checked_versions() -> None:
    dependencies = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    (declared,) = [line for line in dependencies if re.match(r"aiohttp\b", line)]
    upper = re.search(r"<\s*([\d.]+)", declared)
    assert upper is not None, f"aiohttp needs an upper bound in pyproject.toml, got {declared!r}"
    installed = tuple(int(part) for part in version("aiohttp").split(".")[:2])
    assert installed < tuple(int(part) for part in upper.group(1).split(".")[:2])
