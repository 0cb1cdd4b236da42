""" "Allow for this chat" on an approval card, in a real browser (Chromium under Playwright): the call
runs, and the chat's next call of that tool runs without a card asking."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import (
    ARTIFACTS,
    ECHO_NEEDS_APPROVAL,
    ask,
    expect_run_over,
    last_answer,
    serving,
    tool_card,
)
from playwright.sync_api import Page, expect

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow


def test_allow_for_this_chat_runs_the_call_and_the_next_one_without_asking(
    tmp_path: Path, page: Page
) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    script = [
        Turn.tool_calls(ToolCallSpec("echo", {"text": "one"}, id="call_one")),
        Turn.text("Echoed one."),
        Turn.tool_calls(ToolCallSpec("echo", {"text": "two"}, id="call_two")),
        Turn.text("Echoed two."),
    ]
    quick = {"server": {"approval_timeout": 10}}  # a card still asking declines soon: the test fails at once
    with (
        ScriptedModelServer(script) as model,
        serving(tmp_path, model, page, **ECHO_NEEDS_APPROVAL, **quick) as url,
    ):
        page.goto(url)
        ask(page, "Echo one")
        first = tool_card(page, "call_one")
        expect(first).to_have_attribute("data-state", "approval")
        allow = first.get_by_test_id("allow-for-chat-button")
        expect(allow).to_have_text("Allow for this chat")
        page.screenshot(path=str(ARTIFACTS / "web-allow-for-chat-1280.png"))
        page.set_viewport_size({"width": 390, "height": 844})  # on a phone the three buttons fit too
        expect(page.get_by_test_id("sidebar")).not_to_be_in_viewport()  # the drawer has slid away
        expect(allow).to_be_in_viewport()
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        page.screenshot(path=str(ARTIFACTS / "web-allow-for-chat-390.png"))
        allow.click()
        expect(first).to_have_attribute("data-state", "done")
        expect(last_answer(page)).to_have_text("Echoed one.")
        expect_run_over(page)

        ask(page, "Echo two")
        second = tool_card(page, "call_two")
        expect(second).to_have_attribute("data-state", "done")
        expect(second.get_by_test_id("tool-result-body")).to_have_text("two", use_inner_text=False)
        expect(last_answer(page)).to_have_text("Echoed two.")
