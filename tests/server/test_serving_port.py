"""The test helpers start `toolbridge serve` with `--port 0` and learn its port from the startup line
(plain or JSON), or on a fixed port when a test names one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from server_helpers import free_port, serving_port, start_process, write_config

from toolbridge.testing import ScriptedModelServer

pytestmark = pytest.mark.slow


def test_the_port_is_read_from_the_plain_or_json_startup_line() -> None:
    plain = "toolbridge serving on http://127.0.0.1:41234/ (OpenAI base_url http://127.0.0.1:41234/v1, ...)"
    logged = json.dumps({"level": "info", "message": plain.replace("41234", "41235")})
    assert serving_port(f"a warning first\n{plain}\n") == 41234
    assert serving_port(logged) == 41235
    assert serving_port("toolbridge serving on http://[::1]:8080/ (...)") == 8080
    assert serving_port("still starting\n") is None


def test_a_process_serves_on_the_port_it_picked_or_the_one_given(tmp_path: Path) -> None:
    with ScriptedModelServer([]) as model:
        config = write_config(tmp_path, model)
        picked = start_process(config, f"sqlite:///{tmp_path / 'picked.db'}")
        try:
            assert f":{picked.server.port}/" in picked.startup_output
            assert picked.server.http().get("/readyz").status_code == 200
        finally:
            picked.stop()
        port = free_port()
        given = start_process(config, f"sqlite:///{tmp_path / 'given.db'}", port=port)
        try:
            assert given.server.port == port
            assert given.server.http().get("/readyz").status_code == 200
        finally:
            given.stop()
