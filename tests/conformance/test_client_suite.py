"""toolbridge's MCP client against the official conformance harness's client suite (every scenario, each
at the revision the harness gives it): it passes every scenario the official Python SDK's own client
passes; what both fail is listed in expected-failures.yml. The harness's mock servers are real HTTP
servers on loopback, and the client is tests/servers/conformance_client.py, which connects as a toolbridge user's config
would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from server_paths import PUBLISHED_SERVERS, test_server_path

HERE = Path(__file__).resolve().parent
NPM_BIN = PUBLISHED_SERVERS / "npm" / "node_modules" / ".bin"


@pytest.mark.slow
@pytest.mark.timeout(400)
def test_the_client_passes_every_scenario_the_sdks_own_client_passes(tmp_path: Path) -> None:
    harness = NPM_BIN / "conformance"
    assert harness.exists(), f"{harness} is missing: run scripts/install-test-servers"
    command = f"{sys.executable} {test_server_path('conformance_client')}"
    # The harness runs on the Node 22 installed beside it (its `node` comes first on PATH).
    env = {**os.environ, "PATH": f"{NPM_BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [str(harness), "client", "--command", command, "--suite", "all", "--timeout", "60000",
         "--expected-failures", str(HERE / "expected-failures.yml"), "--output-dir", str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=360, check=False,
    )  # fmt: skip
    summary = done.stdout[done.stdout.find("Total:") :] or done.stdout[-4000:]
    assert done.returncode == 0, f"{summary}\n(each scenario's checks and the client's stderr: {tmp_path})"
    assert "Expected failures (in baseline)" in done.stdout  # the baseline was read
