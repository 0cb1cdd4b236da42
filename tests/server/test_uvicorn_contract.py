"""What server/_uvicorn.py relies on in uvicorn beyond its documented API; run before raising uvicorn's
upper bound in pyproject.toml. The behaviour itself is tested over a real socket (test_server_security)."""

from __future__ import annotations

import inspect
import re
import tomllib
from importlib.metadata import version
from pathlib import Path

from uvicorn import Config, Server
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolbridge.server._uvicorn import BoundedHttpToolsProtocol

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"


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


def test_uvicorn_is_within_the_checked_versions() -> None:
    dependencies = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    (declared,) = [line for line in dependencies if re.match(r"uvicorn\b", line)]
    upper = re.search(r"<\s*([\d.]+)", declared)
    assert upper is not None, f"uvicorn needs an upper bound in pyproject.toml, got {declared!r}"
    installed = tuple(int(part) for part in version("uvicorn").split(".")[:2])
    assert installed < tuple(int(part) for part in upper.group(1).split(".")[:2])
