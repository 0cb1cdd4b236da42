"""The Stats view's table at 1280x800 with tool and server names as long as real ones, and a real
server's one-line error: it fits the main area beside the sidebar, with no sideways scroll in the table's
box or the page; at 390x844 (a phone) every tool is still a readable card inside the window.
Chromium against `toolbridge serve`'s app (browser_helpers).

Screenshots go to test-artifacts/ (gitignored): web-stats-long-names.png (1280x800) and
web-stats-long-names-390px.png.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from browser_helpers import ARTIFACTS, serving, web_db_url
from playwright.sync_api import Page, expect

from toolbridge.store import Store, ToolCallLogEntry
from toolbridge.testing import ScriptedModelServer
from toolbridge.tools.cache import argument_hash

pytestmark = pytest.mark.slow

SERVER = "excel-mcp-server-production"
FORMATTING = "excel__apply_conditional_formatting_to_range"
PIVOT = "excel__createPivotTableFromNamedRangeWithOptions"  # camelCase: no underscore to wrap at
# What the MCP SDK's server answers for a tool that raised: one line, longer than the fold (120 chars).
ONE_LINE_ERROR = (
    f"Error executing tool {FORMATTING}: the range 'Quarterly Summary'!A1:AZ20000 of "
    "/srv/excel/workbooks/sales-2026-quarterly-summary-final-v3.xlsx has merged cells that cross it"
)


def seed_long_named_calls(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    calls = [
        (FORMATTING, 0.25, "ok", None),
        (FORMATTING, 1.5, "error", ONE_LINE_ERROR),
        (FORMATTING, 0.0, "denied", "The user declined this call."),
        (PIVOT, 0.8, "ok", None),
        ("read_range", 0.01, "ok", None),
    ]
    with Store(web_db_url(tmp_path)) as store:
        for number, (tool, duration, status, error) in enumerate(calls):
            store.log_tool_call(
                ToolCallLogEntry(
                    tool=tool,
                    server=SERVER,
                    call_id=f"call_{number}",
                    argument_hash=argument_hash({}),
                    started_at=now - timedelta(minutes=3 + number),
                    duration=duration,
                    status=status,
                    error=error,
                )
            )


def sideways_overflow(page: Page) -> dict[str, int]:
    """How wide the table's box and the page are, against how wide they show."""
    return page.evaluate(
        """() => {
            const box = document.querySelector('[data-testid="stats-panel"]');
            const table = box.querySelector('[data-testid="stats-table"]');
            const page = document.scrollingElement;
            return {
                tableScrollWidth: table.scrollWidth, tableClientWidth: table.clientWidth,
                boxScrollWidth: box.scrollWidth, boxClientWidth: box.clientWidth,
                pageScrollWidth: page.scrollWidth, pageClientWidth: page.clientWidth,
            };
        }"""
    )


def test_the_stats_table_fits_1280_px_with_long_tool_names(tmp_path: Path, page: Page) -> None:
    seed_long_named_calls(tmp_path)
    page.set_viewport_size({"width": 1280, "height": 800})
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page) as url:
        page.goto(f"{url}#/stats")
        rows = page.get_by_test_id("stats-row")
        expect(rows).to_have_count(3)
        expect(page.locator(".stats-table thead")).to_be_visible()  # a table here, not the phone's cards

        widths = sideways_overflow(page)
        assert widths["tableScrollWidth"] <= widths["tableClientWidth"], widths
        assert widths["boxScrollWidth"] <= widths["boxClientWidth"], widths
        assert widths["pageScrollWidth"] <= widths["pageClientWidth"], widths

        # A wrapped or cut name is still there whole, in its title.
        formatting = page.locator(f'[data-testid="stats-row"][data-tool="{FORMATTING}"]')
        expect(formatting.locator(".stats-tool")).to_have_attribute("title", FORMATTING)
        expect(formatting.locator(".stats-server")).to_have_attribute("title", SERVER)
        # The error's first line is shown cut to the charts' width; a click shows it whole.
        error = page.locator(f'[data-testid="stats-charts"][data-tool="{FORMATTING}"]').get_by_test_id(
            "stats-error-text"
        )
        expect(error.locator(".folded-preview")).to_be_visible()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-stats-long-names.png"), full_page=True)

        page.set_viewport_size({"width": 390, "height": 844})
        expect(page.locator(".stats-table thead")).to_be_hidden()  # each tool a card
        widths = sideways_overflow(page)
        assert widths["pageScrollWidth"] <= widths["pageClientWidth"], widths
        name_box = formatting.locator(".stats-tool").bounding_box()
        assert name_box is not None
        assert name_box["x"] >= 0
        assert name_box["x"] + name_box["width"] <= 390
        page.screenshot(path=str(ARTIFACTS / "web-stats-long-names-390px.png"), full_page=True)
