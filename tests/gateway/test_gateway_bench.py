"""The gateway benchmark runs and prints its ratios from its own run (its numbers are read by people,
never asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_the_gateway_benchmark_measures_direct_gateway_and_bare_sdk_proxy_on_both_transports() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("TOOLBRIDGE_TOKEN", None)
    done = subprocess.run(
        [sys.executable, str(BENCH / "gateway.py"), "--calls", "8"],
        capture_output=True, text=True, timeout=110, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "== stdio" in done.stdout
    assert "== streamable HTTP" in done.stdout
    for side in ("direct", "through the gateway", "bare SDK proxy"):
        assert done.stdout.count(f"  {side} ") == 4  # two tools, two transports
    assert done.stdout.count("ratio gateway / bare SDK proxy: median ") == 4
    verdicts = [line for line in done.stdout.splitlines() if "goal under 1.3x:" in line]
    assert len(verdicts) == 4
    assert all(line.endswith((": met", ": NOT met")) for line in verdicts)
