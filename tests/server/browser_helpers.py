"""Driving the web page in a real browser: `toolbridge serve` as a real process with a scripted model,
and the page helpers the browser tests share (the `browser` and `page` fixtures are in conftest.py).

Debian's Chromium (/usr/bin/chromium) runs under Playwright for Python; every wait is Playwright's
auto-waiting on the page's state (`expect(...)`), never a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, expect
from server_helpers import serving_port

from toolbridge.testing import RecordedRequest, ScriptedModelServer

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
BASIC_SERVER = REPO / "tests" / "servers" / "basic.py"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 15_000
READY_TIMEOUT = 20.0
OUTSIDE_SETTINGS = {
    "TOOLBRIDGE_CONFIG",
    "TOOLBRIDGE_TOKEN",
    "TOOLBRIDGE_DB",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
}
"""Variables of the developer's shell that would change what the server under test does."""

ECHO_NEEDS_APPROVAL: dict[str, Any] = {
    "mcpServers": {"basic": {"command": sys.executable, "args": [str(BASIC_SERVER)]}},
    "agents": {"default": {"approval": {"tools": {"echo": "always"}}}},
}


# -- the server under test -------------------------------------------------------------------------


@contextmanager
def serving(
    tmp_path: Path,
    model: ScriptedModelServer,
    page: Page,
    *,
    token: str | None = None,
    db_url: str | None = None,
    **config: Any,
) -> Iterator[str]:
    """`toolbridge serve` for `model` as a real process on a free port with a fresh database.

    Yields the page's URL once the API answers. Afterwards the page is sent away, so its event stream
    closes and the server (sent SIGTERM) need not wait for it."""
    config_path = tmp_path / "toolbridge.json"
    scripted = {"provider": "openai-compatible", "base_url": model.base_url, "model": "scripted"}
    config_path.write_text(
        json.dumps({"models": {"scripted": scripted}, "default_model": "scripted", **config})
    )
    # Port 0: the server binds a free port itself and names it in its startup line, so no other process
    # can take the port between choosing it and listening on it.
    command = [sys.executable, "-m", "toolbridge", "serve", "--config", str(config_path), "--port", "0"]
    command += ["--db", db_url or web_db_url(tmp_path)]
    if token:
        command += ["--token", token]
    env = {name: value for name, value in os.environ.items() if name not in OUTSIDE_SETTINGS}
    env["TOOLBRIDGE_CACHE_DIR"] = str(tmp_path / "cache")
    log = tmp_path / "serve.log"
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        yield wait_until_serving(process, log)
    finally:
        page.goto("about:blank")
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(READY_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def web_db_url(tmp_path: Path) -> str:
    """The database `serving(tmp_path, ...)` uses: fill it before the server starts to show known data."""
    return f"sqlite:///{tmp_path / 'web.db'}"


def wait_until_serving(process: subprocess.Popen[bytes], log: Path) -> str:
    """The page's URL, from the server's startup line in `log`, once the page answers there."""
    deadline = time.monotonic() + READY_TIMEOUT
    url = None
    while True:
        if process.poll() is not None:
            pytest.fail(f"toolbridge serve exited with {process.returncode}:\n{log.read_text()}")
        if url is None and (port := serving_port(log.read_text())):
            url = f"http://127.0.0.1:{port}/"
        try:
            if url is not None and httpx.get(url, timeout=1.0).status_code == 200:
                return url
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"toolbridge serve did not answer in time:\n{log.read_text()}")
        time.sleep(0.05)  # polling for readiness, not waiting for a guess


def answers_tool_result(text: str) -> Callable[[RecordedRequest], bool]:
    """A request check: the model is being sent the tool result `text`."""

    def check(request: RecordedRequest) -> bool:
        last = request.messages[-1]
        return last["role"] == "tool" and text in str(last["content"])

    return check


# -- page helpers --------------------------------------------------------------------------------------


def ask(page: Page, question: str) -> None:
    page.get_by_label("Message").fill(question)
    page.get_by_role("button", name="Send").click()


def tool_card(page: Page, call_id: str) -> Locator:
    return page.locator(f'[data-testid="tool-card"][data-call-id="{call_id}"]')


def last_answer(page: Page) -> Locator:
    return page.get_by_test_id("assistant-text").last


def expect_run_over(page: Page) -> None:
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    expect(page.get_by_test_id("run-status")).to_have_text("")
