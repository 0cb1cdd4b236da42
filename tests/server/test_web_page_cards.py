"""Tool cards in a real browser (Chromium under Playwright, see browser_helpers.py): each call has its
own card, also when the model reuses a call id in a later turn (some models number their calls per
turn: `call_1` every time); a message's actions (copy, edit, retry); the phone's layout. Screenshots of that chat at 1280x800 and 390x844 go to test-artifacts/
(gitignored): web-cards-1280.png, web-cards-390.png and web-drawer-390.png (the phone's history drawer).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import (
    ARTIFACTS,
    answers_tool_result,
    ask,
    expect_run_over,
    last_answer,
    serving,
    tool_card,
)
from playwright.sync_api import Page, expect

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow


def _expect_one_card_per_turn(page: Page) -> None:
    first, second = tool_card(page, "call_1").nth(0), tool_card(page, "call_1").nth(1)
    expect(tool_card(page, "call_1")).to_have_count(2)
    expect(first).to_have_attribute("data-state", "done")
    expect(first.get_by_test_id("tool-result-body")).to_have_text("42", use_inner_text=False)
    expect(second).to_have_attribute("data-state", "error")
    expect(second.get_by_test_id("tool-result-body")).to_contain_text("1 +", use_inner_text=False)
    # Each card is in its own turn's answer.
    turns = page.get_by_test_id("assistant-message")
    expect(turns.nth(0).get_by_test_id("tool-card")).to_have_count(1)
    expect(turns.nth(1).get_by_test_id("tool-card")).to_have_count(1)


def test_a_call_id_reused_in_the_next_turn_gets_its_own_card_live_and_after_a_reload(
    tmp_path: Path, page: Page
) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"}, id="call_1")),
        Turn.text("It is 42.", expect=answers_tool_result("42")),
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "1 +"}, id="call_1")),
        Turn.text("That one cannot be calculated."),
        Turn.text(
            "Still **not** a sum.", expect=lambda request: request.messages[-1]["content"] == "And 1 +?"
        ),
    ]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page) as url:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.goto(url)
        ask(page, "What is 15 + 27?")
        expect(last_answer(page)).to_have_text("It is 42.")
        expect_run_over(page)
        ask(page, "And 1 +?")
        expect(last_answer(page)).to_have_text("That one cannot be calculated.")
        expect_run_over(page)
        _expect_one_card_per_turn(page)

        page.reload()
        expect(last_answer(page)).to_have_text("That one cannot be calculated.")
        _expect_one_card_per_turn(page)

        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-cards-1280.png"))

        # Message actions: copy an answer, edit a question back into the box, retry one.
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        page.get_by_test_id("assistant-message").first.get_by_test_id("copy-answer").click()
        expect(page.get_by_test_id("copy-answer").first).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == "It is 42."
        questions = page.get_by_test_id("user-message")
        questions.first.get_by_test_id("edit-message").click()
        expect(page.get_by_label("Message")).to_have_value("What is 15 + 27?")
        expect(page.get_by_label("Message")).to_be_focused()
        page.get_by_label("Message").fill("")
        questions.last.get_by_test_id("retry-message").click()
        expect(last_answer(page)).to_have_text("Still not a sum.")
        expect(questions).to_have_count(3)
        expect_run_over(page)
        # On a phone the conversation has the screen; the history is a drawer over it.
        page.set_viewport_size({"width": 390, "height": 844})
        expect(page.get_by_test_id("assistant-message").last).to_be_visible()
        expect(page.get_by_test_id("sidebar")).not_to_be_visible()
        expect(page.get_by_role("button", name="Send")).to_be_in_viewport(ratio=1)
        page.screenshot(path=str(ARTIFACTS / "web-cards-390.png"))
        page.get_by_test_id("drawer-toggle").click()
        expect(page.get_by_label("Agent")).to_be_in_viewport(ratio=1)
        history_item = page.get_by_test_id("chat-item").first
        expect(history_item).to_be_in_viewport(ratio=1)
        page.screenshot(path=str(ARTIFACTS / "web-drawer-390.png"))
        history_item.click()
        expect(page.get_by_test_id("sidebar")).not_to_be_visible()
        expect(page.get_by_test_id("drawer-toggle")).to_have_attribute("aria-expanded", "false")
