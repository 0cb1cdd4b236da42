"""What toolbridge relies on in its dependencies beyond their documented APIs, each in one adapter
module: server/_uvicorn.py (uvicorn's httptools protocol) and _aiohttp_client.py (aiohttp's connector).
Run these before raising a dependency's upper bound in pyproject.toml. The behaviour itself is tested over
real sockets (test_server_security, test_http_client)."""

from __future__ import annotations

import inspect
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import aiohttp
import pytest
from uvicorn import Config, Server
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolbridge.server._uvicorn import BoundedHttpToolsProtocol

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


def test_the_httptools_protocol_has_what_the_bounded_one_overrides_and_reads() -> None:
    for callback in ("data_received", "on_headers_complete", "on_message_complete"):
        assert callback in vars(HttpToolsProtocol), callback
        assert callback in vars(BoundedHttpToolsProtocol), callback
    # What the bounded protocol reads of the instance, set by uvicorn's __init__ and connection_made.
    source = inspect.getsource(HttpToolsProtocol)
    for attribute in ("self.parser", "self.transport", "self.cycle", "self.logger"):
        assert f"{attribute} =" in source, attribute
    assert "response_complete" in inspect.getsource(inspect.getmodule(HttpToolsProtocol))
    assert inspect.signature(Config).parameters["http"].default == "auto"  # a protocol class is accepted


def test_the_graceful_server_finds_the_signals_uvicorn_captured() -> None:
    assert "self._captured_signals" in inspect.getsource(Server)


def test_the_connector_takes_pooled_connections_through_get() -> None:
    get = vars(aiohttp.BaseConnector)["_get"]
    assert inspect.iscoroutinefunction(get)
    assert list(inspect.signature(get).parameters) == ["self", "key", "traces"]
    # connect() asks _get for a pooled connection before it opens a new one.
    assert "await self._get(key, traces)" in inspect.getsource(aiohttp.BaseConnector.connect)


@pytest.mark.parametrize("package", ["uvicorn", "aiohttp"])
def test_the_installed_version_is_within_the_checked_ones(package: str) -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    lines = [
        *project["dependencies"],
        *(line for extra in project["optional-dependencies"].values() for line in extra),
    ]
    declared = [line for line in lines if re.match(rf"{package}\b", line)]
    assert declared, f"{package} is declared nowhere in pyproject.toml"
    installed = tuple(int(part) for part in version(package).split(".")[:2])
    for line in declared:  # in each extra that brings it
        upper = re.search(r"<\s*([\d.]+)", line)
        assert upper is not None, f"{package} needs an upper bound in pyproject.toml, got {line!r}"
        assert installed < tuple(int(part) for part in upper.group(1).split(".")[:2])
