"""The browser tests' fixtures: a fresh Chromium profile per test, and its page (see browser_helpers)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest
from browser_helpers import CHROMIUM, CHROMIUM_ARGS, WAIT_MS
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright


@pytest.fixture
def browser() -> Iterator[BrowserContext]:
    """A fresh Chromium profile per test."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's Chromium (`apt-get install -y chromium`, or "
            "scripts/install-test-servers). Playwright's own browser download is not used."
        )
    expect.set_options(timeout=WAIT_MS)
    with (
        sync_playwright() as playwright,
        tempfile.TemporaryDirectory(prefix="toolbridge-chromium-") as profile,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        context.set_default_timeout(WAIT_MS)
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def page(browser: BrowserContext) -> Iterator[Page]:
    """The page, failing the test on any uncaught script error."""
    page = browser.pages[0] if browser.pages else browser.new_page()
    page.set_viewport_size({"width": 1280, "height": 860})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    assert not errors, f"the page threw: {errors}"
