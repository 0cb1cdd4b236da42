"""Driving the web page in a real browser: what `toolbridge serve` serves, with a scripted model, and the
page helpers the browser tests share (the `browser` and `page` fixtures are in conftest.py).

Debian's Chromium (/usr/bin/chromium) runs under Playwright for Python; every wait is Playwright's
auto-waiting on the page's state (`expect(...)`), never a sleep.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect
from server_helpers import serve_in_thread

from toolbridge.models.tool_modes import CACHE_DIR_ENV_VAR
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
    """What `toolbridge serve` serves for `model`, with a fresh database: its app in this process, under
    uvicorn on a thread (serve_in_thread) on a free 127.0.0.1 port, as the command would run it for this
    config file, `--db` and `--token`. The page is what the browser tests look at, not the process (its
    start, stop and startup line are tested against a real one in test_server_shutdown.py and
    test_serving_port.py), and a process of its own would cost each test about a CPU-second to import.

    Yields the page's URL once the server listens. Afterwards the page is sent away, so its event stream
    closes before the server stops."""
    config_path = tmp_path / "toolbridge.json"
    scripted = {"provider": "openai-compatible", "base_url": model.base_url, "model": "scripted"}
    config_path.write_text(
        json.dumps({"models": {"scripted": scripted}, "default_model": "scripted", **config})
    )
    with pytest.MonkeyPatch.context() as environment:
        # What the command's process had in place of the developer's shell (read when used, so set for
        # as long as the server runs).
        for name in OUTSIDE_SETTINGS:
            environment.delenv(name, raising=False)
        environment.setenv(CACHE_DIR_ENV_VAR, str(tmp_path / "cache"))
        served = serve_in_thread(
            tmp_path, None, config_path=config_path, token=token, db_url=db_url or web_db_url(tmp_path)
        )
        with served as server:
            try:
                yield f"{server.url}/"
            finally:
                page.goto("about:blank")


def web_db_url(tmp_path: Path) -> str:
    """The database `serving(tmp_path, ...)` uses: fill it before the server starts to show known data."""
    return f"sqlite:///{tmp_path / 'web.db'}"


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
