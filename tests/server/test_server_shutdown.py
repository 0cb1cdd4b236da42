"""Stopping `toolbridge serve` while a web page holds its event stream open: the stream is ended cleanly
and the server exits on its own, rather than cutting the page off after the graceful-shutdown timeout."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from server_helpers import EventReader, start_process, write_config

from toolbridge.testing import ScriptedModelServer

pytestmark = pytest.mark.slow


def test_ctrl_c_ends_open_event_streams_cleanly(tmp_path: Path) -> None:
    with ScriptedModelServer([]) as model:
        running = start_process(write_config(tmp_path, model), f"sqlite:///{tmp_path / 'chats.db'}")
        try:
            http = running.server.http()
            chat_id = http.post("/api/chats", json={"agent": "default"}).json()["id"]
            with EventReader(http, chat_id) as events:
                running.process.send_signal(signal.SIGINT)
                # The body ends properly (a cut connection would raise here instead).
                rest = events.remaining_lines()
                assert all(line == "" or line.startswith(":") for line in rest)
            assert running.process.wait(timeout=30) == 130  # stopped by SIGINT, as a shell reports it
            output = running.process.stdout.read() if running.process.stdout else ""
            assert "Traceback" not in output
            assert "CancelledError" not in output
        finally:
            running.stop()
