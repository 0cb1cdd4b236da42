"""The official conformance harness's `tasks-*` server scenarios through `toolbridge gateway --http` in
front of our tasks server (stdio): the gateway relays the server's tasks as the harness checks a server's
own (the same scenarios the server passes direct: tests/mcp/test_tasks_server_conformance.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import anyio
import pytest

from gateway.gateway_helpers import start_http_gateway, streamable_client
from server_paths import PUBLISHED_SERVERS, test_server_path

pytestmark = pytest.mark.slow

BIN = PUBLISHED_SERVERS / "npm" / "node_modules" / ".bin"
SCENARIOS = [
    "tasks-lifecycle",
    "tasks-capability-negotiation",
    "tasks-wire-fields",
    "tasks-request-state-removal",
    "tasks-mrtr-input",
    "tasks-request-headers",
    "tasks-dispatch-and-envelope",
]


@pytest.fixture(scope="module")
def gateway_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp_path = tmp_path_factory.mktemp("gateway-tasks")
    servers = {"tasks": {"command": sys.executable, "args": [test_server_path("tasks_server")]}}
    with start_http_gateway(tmp_path, {"mcpServers": servers}) as gateway:

        async def warm_up() -> None:
            # The server connected and its tools listed: the harness's first call is not a cold start.
            async with streamable_client(gateway.mcp_url) as client:
                await client.call_tool("greet", {"name": "warm-up"})

        anyio.run(warm_up)
        yield gateway.mcp_url


@pytest.mark.skipif(not (BIN / "conformance").exists(), reason="the conformance harness is not installed")
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_gateway_passes_the_harness_tasks_scenario(scenario: str, gateway_url: str) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    command = ["conformance", "server", "--url", gateway_url, "--scenario", scenario]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert " 0 failed" in done.stdout, done.stdout
