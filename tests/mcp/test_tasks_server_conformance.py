"""Our tasks test server against the official conformance harness's `tasks-*` server scenarios: the
server the client tests talk to speaks the extension's wire as the harness checks it (the SDK's own
server has no side of the extension to compare with)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from server_paths import PUBLISHED_SERVERS

pytestmark = pytest.mark.slow

BIN = PUBLISHED_SERVERS / "npm" / "node_modules" / ".bin"
SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
]


@pytest.mark.skipif(not (BIN / "conformance").exists(), reason="the conformance harness is not installed")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_tasks_server_passes_the_harness_scenario(scenario: str, http_server: Callable[..., Any]) -> None:
    server = http_server("tasks_server", "streamable-http")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    command = ["conformance", "server", "--url", server.url, "--scenario", scenario]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 failed" in done.stdout, done.stdout
