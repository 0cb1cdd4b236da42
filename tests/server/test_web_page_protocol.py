"""The Servers view names the MCP revision each connected server speaks (in Chromium, see browser_helpers)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from browser_helpers import BASIC_SERVER, serving
from playwright.sync_api import Locator, Page, expect

from toolbridge.testing import ScriptedModelServer

pytestmark = pytest.mark.slow

BASIC = {"command": sys.executable, "args": [str(BASIC_SERVER)]}


def test_each_server_card_names_the_revision_it_speaks(tmp_path: Path, page: Page) -> None:
    servers = {"new": BASIC, "old": {**BASIC, "protocol": "2025-11-25"}, "off": {**BASIC, "enabled": False}}
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page, mcpServers=servers) as url:
        page.goto(url)
        page.get_by_role("link", name="Servers").click()

        def card(name: str) -> Locator:
            return page.locator(f'[data-testid="server-card"][data-server="{name}"]')

        expect(card("new").get_by_test_id("server-protocol")).to_have_text("MCP 2026-07-28")
        expect(card("old").get_by_test_id("server-protocol")).to_have_text("MCP 2025-11-25")
        expect(card("off")).to_contain_text("disabled")
        expect(card("off").get_by_test_id("server-protocol")).to_have_count(0)
