"""`toolbridge serve` hides what it made while starting from the garbage collector (`gc.freeze()`), so
its full collections while serving walk only what requests make, not every module, schema and route;
and it collects the young generation less often than Python's default (every 700 objects), which a
streamed reply's short-lived objects made it do every few chunks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from server_helpers import free_port, write_config

from toolbridge.server._uvicorn import YOUNG_COLLECTION_THRESHOLD
from toolbridge.testing import ScriptedModelServer

# `toolbridge serve` in this process, and a thread that waits (bounded) for the freeze, reports it and
# stops the server with SIGTERM, as an orchestrator would.
SERVE_AND_WATCH = """
import gc, os, signal, sys, threading, time

def watch():
    deadline = time.monotonic() + 20
    while gc.get_freeze_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # polling for the freeze, with a deadline
    print(f"frozen objects: {gc.get_freeze_count()} thresholds: {gc.get_threshold()[0]}", flush=True)
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=watch, daemon=True).start()
from toolbridge.cli import main
sys.argv = ["toolbridge", *sys.argv[1:]]
main()
"""


@pytest.mark.slow
def test_serve_freezes_what_it_made_while_starting_and_collects_young_objects_less_often(
    tmp_path: Path,
) -> None:
    with ScriptedModelServer([]) as model:
        config = write_config(tmp_path, model)
        serve = ["serve", "--config", str(config), "--db", f"sqlite:///{tmp_path / 'chats.db'}"]
        finished = subprocess.run(
            [sys.executable, "-c", SERVE_AND_WATCH, *serve, "--port", str(free_port())],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "TOOLBRIDGE_TOKEN": ""},
        )
    assert finished.returncode == 0, finished.stderr
    frozen = int(finished.stdout.split("frozen objects: ")[1].split()[0])
    assert frozen > 10_000, finished.stdout  # the modules and the app, not a handful of objects
    young_threshold = int(finished.stdout.split("thresholds: ")[1].split()[0])
    assert young_threshold == YOUNG_COLLECTION_THRESHOLD > 700, finished.stdout
