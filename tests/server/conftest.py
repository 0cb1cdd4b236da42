"""The browser tests' fixtures: one Chromium per test process (xdist worker), a fresh browser context per
test (cookies and storage of its own, as a fresh profile had), and its page (see browser_helpers)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, WAIT_MS
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright


class _Chromium:
    """The worker's Chromium, and the event loop Playwright's sync API runs it on."""

    def __init__(self, browser: Browser, loop: asyncio.AbstractEventLoop) -> None:
        self.browser = browser
        self._loop = loop

    @contextmanager
    def in_use(self) -> Iterator[Browser]:
        """The browser, for one test.

        Playwright's sync API leaves its loop marked as this thread's running loop after every call (its
        calls switch into that loop). Marked between tests, it would make every later `asyncio.run` (the
        worker's async tests) refuse to start, so it is marked only while a test uses the browser."""
        asyncio._set_running_loop(self._loop)
        try:
            yield self.browser
        finally:
            asyncio._set_running_loop(None)


@pytest.fixture(scope="session")
def chromium() -> Iterator[_Chromium]:
    """Debian's Chromium, started once for the test process's browser tests."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's Chromium (`apt-get install -y chromium`, or "
            "scripts/install-test-servers). Playwright's own browser download is not used."
        )
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        shared = _Chromium(browser, asyncio.get_running_loop())  # Playwright's, marked by launch()
        asyncio._set_running_loop(None)
        try:
            yield shared
        finally:
            with shared.in_use():
                browser.close()
            # Stopping Playwright runs its loop to its end (which unmarks it), as from inside a call.
            asyncio._set_running_loop(shared._loop)


@pytest.fixture
def browser(chromium: _Chromium) -> Iterator[BrowserContext]:
    """A fresh browser context per test: cookies, storage and cache of its own."""
    with chromium.in_use() as shared:
        context = shared.new_context()
        context.set_default_timeout(WAIT_MS)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """The page, failing the test on any uncaught script error."""
    page = browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 860})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert not errors, f"the page threw: {errors}"
