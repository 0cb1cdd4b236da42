"""The web page as a person sees it, in Chromium against `toolbridge serve` (see browser_helpers): the
Stats view's charts and folded errors, a 400 px wide window, Stop on a running call, and the banner for a
server that failed to start.

Screenshots go to test-artifacts/ (gitignored): web-stats.png and web-stats-400px.png (the Stats view),
web-chat-400px.png (a chat with a tool call in a 400 px window), web-cancelled.png (a call stopped
while it ran).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_helpers import (
    ARTIFACTS,
    BASIC_SERVER,
    ask,
    expect_run_over,
    last_answer,
    serving,
    tool_card,
    web_db_url,
)
from playwright.sync_api import Locator, Page, expect
from server_helpers import read_only_database_url

from toolbridge.store import Store, ToolCallLogEntry
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn
from toolbridge.tools.cache import argument_hash

pytestmark = pytest.mark.slow

NARROW = {"width": 400, "height": 800}
BASIC = {"command": sys.executable, "args": [str(BASIC_SERVER)]}
MISSING_COMMAND = "/nonexistent/toolbridge-test-server"
BROKEN_AND_BASIC: dict[str, Any] = {"mcpServers": {"broken": {"command": MISSING_COMMAND}, "basic": BASIC}}
TRACEBACK = (
    "Server 'excel' failed: Traceback (most recent call last):\n"
    '  File "/srv/excel/read.py", line 3, in read_range\n'
    "    raise KeyError(sheet)\n"
    "KeyError: 'the workbook sales-2025.xlsx has no sheet named Summary'"
)


def seed_calls(tmp_path: Path) -> None:
    """read_range: 2 fast calls and a declined one 2 minutes ago; 3 slower ones (the slowest failing
    with a traceback) and a cancelled one 40 minutes ago. calculate: one call."""
    now = datetime.now(UTC)
    calls = [
        ("read_range", "excel", 0.004, 2, "ok", None),
        ("read_range", "excel", 0.008, 2, "ok", None),
        ("read_range", "excel", 0.0, 2, "denied", "The user declined this call."),
        ("read_range", "excel", 0.2, 40, "ok", None),
        ("read_range", "excel", 0.3, 40, "ok", None),
        ("read_range", "excel", 3.0, 40, "error", TRACEBACK),
        ("read_range", "excel", 20.0, 40, "cancelled", "The run was cancelled."),
        ("calculate", "native", 0.02, 10, "ok", None),
    ]
    with Store(web_db_url(tmp_path)) as store:
        for number, (tool, server, duration, minutes_ago, status, error) in enumerate(calls):
            store.log_tool_call(
                ToolCallLogEntry(
                    tool=tool,
                    server=server,
                    call_id=f"call_{number}",
                    argument_hash=argument_hash({}),
                    started_at=now - timedelta(minutes=minutes_ago),
                    duration=duration,
                    status=status,
                    error=error,
                )
            )


def bar_counts(chart: Locator) -> list[int]:
    return [
        int(count) for count in chart.locator("rect").evaluate_all("bars => bars.map(b => b.dataset.count)")
    ]


def open_stats_for_the_last_hour(page: Page) -> None:
    page.get_by_role("link", name="Stats").click()
    page.get_by_label("Period").select_option("1h")
    expect(page.get_by_test_id("stats-panel")).to_have_attribute("data-since", "1h")
    expect(page.get_by_test_id("stats-row")).to_have_count(2)


def expect_no_sideways_scroll(page: Page) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width


def expect_inside_the_window(page: Page, locator: Locator) -> None:
    """Every element `locator` matches is visible and lies within the window's width."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    boxes = locator.evaluate_all("cells => cells.map(c => c.getBoundingClientRect().toJSON())")
    assert boxes
    outside = [box for box in boxes if box["left"] < 0 or box["right"] > width + 0.5 or box["width"] == 0]
    assert not outside, f"cut or hidden in a {width} px window: {outside}"


def test_the_stats_view_draws_each_tools_latency_and_calls_over_time_and_folds_long_errors(
    tmp_path: Path, page: Page
) -> None:
    seed_calls(tmp_path)
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page) as url:
        page.goto(url)
        open_stats_for_the_last_hour(page)
        charts = page.locator('[data-testid="stats-charts"][data-tool="read_range"]')

        # Declined and cancelled calls are counted, and said to be neither successes nor failures.
        figures = page.locator('[data-testid="stats-row"][data-tool="read_range"]')
        expect(figures.locator('td[data-label="Calls"]')).to_contain_text("7")
        expect(figures.get_by_test_id("stats-not-run")).to_have_text("1 declined, 1 cancelled")
        expect(figures.locator('td[data-label="Success"]')).to_have_text("80%")

        # Latency: every bucket is a bar (10 bounds and one open-ended), the finished calls' filled.
        latency = charts.get_by_test_id("latency-chart")
        assert bar_counts(latency) == [2, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0]
        expect(latency.locator("rect").nth(0).locator("title")).to_have_text("up to 10 ms: 2 calls")
        expect(charts).to_contain_text("p90 1.92 s")
        expect(charts).to_contain_text("max 3.00 s")

        # Calls over time: the last hour in 5-minute bars (13 with the one now), two of them filled.
        calls = bar_counts(charts.get_by_test_id("calls-chart"))
        assert len(calls) == 13
        assert sorted(count for count in calls if count) == [3, 4]  # every call, declined or not
        assert calls.index(4) < calls.index(3)  # the older calls come first
        calculate_calls = page.locator('[data-testid="stats-charts"][data-tool="calculate"]').get_by_test_id(
            "calls-chart"
        )
        assert sum(bar_counts(calculate_calls)) == 1

        # The traceback is folded to its first line; a click shows all of it.
        error = charts.get_by_test_id("stats-error-text")
        expect(error.locator("summary")).to_have_text(
            "Server 'excel' failed: Traceback (most recent call last):"
        )
        full_text = error.locator(".folded-full")
        expect(full_text).to_be_hidden()
        error.locator("summary").click()
        expect(full_text).to_be_visible()
        expect(full_text).to_have_text(TRACEBACK)

        # The table shows every column inside the window.
        expect_inside_the_window(page, page.locator(".stats-table th"))
        expect_no_sideways_scroll(page)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-stats.png"), full_page=True)

        # Where the table would not fit, each tool becomes a card: every figure still shown, inside
        # the window (1024 and 800 px leave the sidebar beside a narrow main area; 400 px stacks them).
        figures = page.locator('[data-testid="stats-row"][data-tool="read_range"] td')
        for width in (1024, 800, 400):
            page.set_viewport_size({"width": width, "height": 800})
            expect(figures).to_have_count(8)
            for cell in figures.all():
                expect(cell).to_be_visible()
            expect_inside_the_window(page, figures)
            expect_inside_the_window(page, page.get_by_test_id("calls-chart"))
            expect_no_sideways_scroll(page)
        page.screenshot(path=str(ARTIFACTS / "web-stats-400px.png"), full_page=True)


def test_a_chat_fits_a_400_px_window(tmp_path: Path, page: Page) -> None:
    long_text = "a_long_unbroken_argument_" * 12
    script = [
        Turn.tool_calls(ToolCallSpec("echo", {"text": long_text}, id="call_long")),
        Turn.text(f"The server echoed `{long_text}` back, and here is a long line: {'word ' * 40}"),
    ]
    page.set_viewport_size(NARROW)
    agents = {"default": {"approval": {"tools": {"echo": "never"}}}}
    with (
        ScriptedModelServer(script) as model,
        serving(tmp_path, model, page, agents=agents, **BROKEN_AND_BASIC) as url,
    ):
        page.goto(url)
        send = page.get_by_role("button", name="Send")
        expect(send).to_be_in_viewport(ratio=1)
        expect(page.get_by_test_id("server-banner")).to_be_visible()  # the banner fits too
        expect_no_sideways_scroll(page)

        ask(page, "Echo something long")
        expect(tool_card(page, "call_long")).to_have_attribute("data-state", "done")
        expect(last_answer(page)).to_contain_text("here is a long line")
        expect_run_over(page)
        expect(send).to_be_in_viewport(ratio=1)
        expect_no_sideways_scroll(page)
        expect_inside_the_window(page, page.get_by_test_id("tool-card"))
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-chat-400px.png"))

        page.get_by_test_id("nav-servers").click()
        expect(page.locator('[data-testid="server-card"][data-server="broken"]')).to_contain_text("failed")
        expect_no_sideways_scroll(page)
        page.get_by_test_id("nav-stats").click()
        expect(page.get_by_test_id("stats-row")).to_have_count(1)  # the echo call
        expect_inside_the_window(page, page.locator('[data-testid="stats-row"] td'))
        expect_no_sideways_scroll(page)


def test_stop_marks_a_running_call_cancelled_also_after_a_reload(tmp_path: Path, page: Page) -> None:
    script = [Turn.tool_calls(ToolCallSpec("sleep", {"ms": 60_000}, id="call_sleep"))]
    config: dict[str, Any] = {
        "mcpServers": {"basic": BASIC},
        "agents": {"default": {"approval": {"tools": {"sleep": "never"}}}},
    }
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **config) as url:
        page.goto(url)
        ask(page, "Sleep for a minute")
        card = tool_card(page, "call_sleep")
        expect(card).to_have_attribute("data-state", "running")
        page.get_by_role("button", name="Stop").click()
        expect(card).to_have_attribute("data-state", "cancelled")
        expect(card.get_by_test_id("tool-state")).to_have_text("Cancelled")
        expect_run_over(page)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-cancelled.png"))

        page.reload()
        stored = tool_card(page, "call_sleep")
        expect(stored).to_have_attribute("data-state", "cancelled")
        expect(stored.get_by_test_id("tool-state")).to_have_text("Cancelled")


def test_stop_while_a_call_waits_for_approval_marks_it_cancelled(tmp_path: Path, page: Page) -> None:
    script = [Turn.tool_calls(ToolCallSpec("sleep", {"ms": 10}, id="call_waiting"))]
    config: dict[str, Any] = {
        "mcpServers": {"basic": BASIC},
        "agents": {"default": {"approval": {"tools": {"sleep": "always"}}}},
    }
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **config) as url:
        page.goto(url)
        ask(page, "Sleep a little")
        card = tool_card(page, "call_waiting")
        expect(card).to_have_attribute("data-state", "approval")
        page.get_by_role("button", name="Stop").click()
        expect(card).to_have_attribute("data-state", "cancelled")
        expect(card.get_by_test_id("tool-approval")).to_be_hidden()
        expect_run_over(page)


def test_a_server_that_failed_to_start_is_named_in_a_banner(tmp_path: Path, page: Page) -> None:
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page, **BROKEN_AND_BASIC) as url:
        page.goto(url)
        banner = page.get_by_test_id("server-banner")
        expect(banner).to_be_visible()
        failed = banner.get_by_test_id("failed-server")
        expect(failed).to_have_count(1)  # basic started
        expect(failed).to_have_attribute("data-server", "broken")
        expect(failed).to_contain_text("Server broken did not start")
        expect(failed.get_by_test_id("failed-server-reason")).to_contain_text(MISSING_COMMAND)

        banner.get_by_role("link", name="Details").click()
        expect(page.locator('[data-testid="server-card"][data-server="broken"]')).to_contain_text("failed")
        banner.get_by_role("button", name="Dismiss the server warning").click()
        expect(banner).to_be_hidden()
        page.get_by_role("button", name="Refresh").click()  # the same failure stays dismissed
        expect(page.locator('[data-testid="server-card"][data-server="basic"]')).to_contain_text("connected")
        expect(banner).to_be_hidden()


def test_no_banner_when_every_server_started(tmp_path: Path, page: Page) -> None:
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page, mcpServers={"basic": BASIC}) as url:
        page.goto(url)
        page.get_by_role("link", name="Servers").click()
        expect(page.locator('[data-testid="server-card"][data-server="basic"]')).to_contain_text("connected")
        expect(page.get_by_test_id("server-banner")).to_be_hidden()


def test_the_servers_view_shows_a_database_that_cannot_be_written(tmp_path: Path, page: Page) -> None:
    db_url = read_only_database_url("read_only_page")
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page, db_url=db_url) as url:
        page.goto(url)
        page.get_by_role("link", name="Servers").click()
        expect(page.get_by_test_id("server-banner")).to_be_hidden()
        expect(page.get_by_test_id("store-degraded")).to_have_count(0)

        refused = httpx.post(f"{url}api/chats", json={}, timeout=10)  # a write the database refuses
        assert refused.status_code == 503
        page.get_by_role("button", name="Refresh").click()
        card = page.get_by_test_id("store-degraded")
        expect(card).to_contain_text("degraded")
        expect(card).to_contain_text("read-only transaction")
