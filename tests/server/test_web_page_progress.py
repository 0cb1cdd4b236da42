"""What servers report on the web page: progress on a running call's tool card, live, and the messages
a server logged, on the Servers view."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from browser_helpers import REPO, ask, expect_run_over, serving, tool_card
from playwright.sync_api import Page, expect

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

REPORTS_SERVER = REPO / "tests" / "servers" / "reports.py"


def test_a_running_calls_card_shows_the_progress_its_server_reports(tmp_path: Path, page: Page) -> None:
    release = tmp_path / "release"
    script = [
        Turn.tool_calls(ToolCallSpec("hold", {"until_file": str(release)}, id="call_hold")),
        Turn.text("It is done."),
    ]
    servers = {"mcpServers": {"reports": {"command": sys.executable, "args": [str(REPORTS_SERVER)]}}}
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **servers) as url:
        page.goto(url)
        ask(page, "Hold on")
        card = tool_card(page, "call_hold")
        expect(card).to_have_attribute("data-state", "running")
        expect(card.get_by_test_id("tool-progress-label")).to_have_text("50% halfway")
        expect(card.locator("progress")).to_have_attribute("value", "50")

        release.touch()  # the server finishes the call
        expect(card).to_have_attribute("data-state", "done")
        expect(card.get_by_test_id("tool-progress")).to_be_hidden()
        expect_run_over(page)


def test_the_servers_view_shows_what_a_server_logged(tmp_path: Path, page: Page) -> None:
    reports = {"command": sys.executable, "args": [str(REPORTS_SERVER)], "log_level": "info"}
    with (
        ScriptedModelServer([]) as model,
        serving(tmp_path, model, page, mcpServers={"reports": reports}) as url,
    ):
        page.goto(url)
        page.get_by_role("link", name="Servers").click()
        card = page.locator('[data-testid="server-card"][data-server="reports"]')
        expect(card.get_by_test_id("server-state")).to_have_text("connected")
        card.get_by_text("Log messages").click()
        entry = card.get_by_test_id("server-log-entry")
        expect(entry).to_contain_text("setup: log level set to info")
        expect(entry).to_have_attribute("data-level", "notice")
