"""The OpenTelemetry SDK is an optional extra: without an endpoint it is never imported, and asking for
export without it installed fails with a message that says what to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from server_helpers import write_config

pytestmark = pytest.mark.slow

NO_SDK = """
import sys
sys.modules["opentelemetry.sdk"] = None  # as if `toolbridge[otel]` were not installed
sys.modules["opentelemetry.exporter"] = None
from toolbridge.cli import main
sys.argv = ["toolbridge", *sys.argv[1:]]
main()
"""


def test_a_run_without_an_endpoint_never_imports_the_sdk_nor_the_metrics_library(tmp_path: Path) -> None:
    script = (
        "import sys, anyio\n"
        "from toolbridge import Agent\n"
        "from toolbridge.config import Config\n"
        "print(Agent.from_config(Config(), model='demo').run_sync('What is 15 + 27?').output)\n"
        "assert not [m for m in sys.modules if m.startswith('opentelemetry.sdk')], 'the SDK was imported'\n"
        # Nor the metrics library: the run's calls are counted only where metrics were installed.
        "assert 'prometheus_client' not in sys.modules, 'the metrics library was imported'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout


def test_an_agent_counts_nothing_and_never_imports_the_metrics_library(tmp_path: Path) -> None:
    """Metrics are serve's and the gateway's (`install_metrics()`): an agent's tool calls go through the
    pipeline's observers, which only count into a meter when one is installed. (The built-in `demo`
    model is the scripted one here: `toolbridge.testing` brings the server, and its metrics, along.)"""
    script = (
        "import sys\n"
        "from toolbridge.agent import Agent\n"
        "from toolbridge.config import Config\n"
        "result = Agent.from_config(Config(), model='demo').run_sync('What is 15 + 27?')\n"
        "assert [record.result.text for record in result.tool_calls] == ['42'], result.tool_calls\n"
        "assert 'prometheus_client' not in sys.modules, 'the metrics library was imported'\n"
        "print(result.output)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "42" in done.stdout


def test_serve_with_an_endpoint_but_no_sdk_says_what_to_install(tmp_path: Path) -> None:
    config = write_config(tmp_path, None)
    config.write_text(
        config.read_text().replace(
            '"agents"', '"telemetry": {"otlp_endpoint": "http://127.0.0.1:4318"}, "agents"', 1
        )
    )
    command = [
        sys.executable,
        "-c",
        NO_SDK,
        "serve",
        "--config",
        str(config),
        "--db",
        f"sqlite:///{tmp_path / 'x.db'}",
        "--port",
        "0",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert "pip install 'toolbridge[otel]'" in done.stderr
    assert "Traceback" not in done.stderr
