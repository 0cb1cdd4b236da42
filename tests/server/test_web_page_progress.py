"""The web page's tool card shows the progress its server reports, live, while the call runs."""

from __future__ import annotations

import sys
from pathlib import Path

from browser_helpers import REPO, ask, expect_run_over, serving, tool_card
from playwright.sync_api import Page, expect

from toolbridge.testing import ScriptedModel, ToolCallSpec, Turn

REPORTS_SERVER = REPO / "tests" / "servers" / "reports.py"


def test_a_running_calls_card_shows_the_progress_its_server_reports(tmp_path: Path, page: Page) -> None:
    release = tmp_path / "release"
    script = [
        Turn.tool_calls(ToolCallSpec("hold", {"until_file": str(release)}, id="call_hold")),
        Turn.text("It is done."),
    ]
    servers = {"mcpServers": {"reports": {"command": sys.executable, "args": [str(REPORTS_SERVER)]}}}
    with ScriptedModel(script) as model, serving(tmp_path, model, page, **servers) as url:
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
