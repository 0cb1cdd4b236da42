"""A server's questions on the web page, in Chromium: a form in the tool card (defaults pre-filled, a
missing answer refused and corrected) and a sampling request allowed from the card; two pages calling
the same server at once each get their own question."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

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

ASKER = {
    "asker": {
        "command": sys.executable,
        "args": [str(Path(__file__).parents[1] / "servers" / "asks_client.py")],
    }
}


def test_a_form_and_a_sampling_request_are_answered_in_the_tool_card(tmp_path: Path, page: Page) -> None:
    answered = {
        "action": "accept",
        "content": {"city": "Oslo", "guests": 2, "meal": "dinner", "vegetarian": True},
    }
    script = [
        Turn.tool_calls(ToolCallSpec("ask_preferences", {}, id="call_form")),
        Turn.text("Booked.", expect=answers_tool_result(json.dumps(answered, sort_keys=True))),
        Turn.tool_calls(ToolCallSpec("summarize", {"text": "a long text"}, id="call_sum")),
        Turn.text("short.", expect=lambda r: r.messages[0]["content"] == "Summarize in one line."),
        Turn.text("Summarized.", expect=answers_tool_result("short.")),
    ]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, mcpServers=ASKER) as url:
        page.goto(url)
        ask(page, "Book a table")
        card = tool_card(page, "call_form")
        question = card.get_by_test_id("server-question")
        expect(question).to_contain_text("Server asker asks: Booking details?")
        expect(question.locator('[data-field="guests"] input')).to_have_value("2")  # the default
        expect(question.locator('[data-field="meal"] select')).to_have_value("dinner")
        question.get_by_role("button", name="Send").click()
        expect(question.get_by_test_id("server-question-status")).to_have_text("City is required")
        question.locator('[data-field="city"] input').fill("Oslo")
        question.locator('[data-field="vegetarian"] input').check()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-page-server-form.png"))
        question.get_by_role("button", name="Send").click()
        expect(card).to_have_attribute("data-state", "done")
        expect(card).to_contain_text("You answered the server: accept.")
        expect(last_answer(page)).to_have_text("Booked.")
        expect_run_over(page)

        ask(page, "Summarize it")
        card = tool_card(page, "call_sum")
        question = card.get_by_test_id("server-question")
        expect(question).to_contain_text(
            "Server asker asks the model scripted for a completion (up to 64 tokens)"
        )
        expect(question).to_contain_text("system: Summarize in one line.")
        question.get_by_role("button", name="Allow").click()
        expect(card).to_have_attribute("data-state", "done")
        expect(last_answer(page)).to_have_text("Summarized.")
        expect_run_over(page)


def test_a_page_to_open_is_offered_in_the_card_and_its_completion_shown(tmp_path: Path, page: Page) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("ask_to_open", {"url": "https://example.com/login"}, id="call_url")),
        Turn.text("Signed in.", expect=answers_tool_result("accept")),
    ]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, mcpServers=ASKER) as url:
        page.goto(url)
        page.context.route("https://example.com/**", lambda route: route.fulfill(body="signed in"))
        ask(page, "Sign me in")
        card = tool_card(page, "call_url")
        question = card.get_by_test_id("server-question")
        expect(question).to_contain_text("Server asker asks you to open a page: Sign in to continue.")
        expect(question.get_by_role("link")).to_have_attribute("href", "https://example.com/login")
        with page.context.expect_page() as opened:
            question.get_by_role("button", name="Open").click()
        assert opened.value.url == "https://example.com/login"
        expect(card.get_by_test_id("server-question-completed")).to_have_text(
            "The server says the step is complete."
        )
        expect(last_answer(page)).to_have_text("Signed in.")


def test_two_pages_calling_the_same_server_at_once_each_answer_their_own_question(
    tmp_path: Path, page: Page, http_server: Callable[..., Any]
) -> None:
    asker = http_server("asks_client", "streamable-http")
    # Over streamable HTTP each question comes on its call's own stream; its tools ask mid-call (2025-11-25).
    servers = {"asker": {"type": "streamable-http", "url": asker.url, "protocol": "2025-11-25"}}
    script = [
        Turn.tool_calls(ToolCallSpec("ask_contact", {}, id="call_1")),
        Turn.tool_calls(ToolCallSpec("ask_contact", {}, id="call_1")),
        Turn.text("Bea it is.", expect=answers_tool_result("accepted Bea")),
        Turn.text("Ann it is.", expect=answers_tool_result("accepted Ann")),
    ]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, mcpServers=servers) as url:
        other = page.context.new_page()
        try:
            page.goto(url)
            ask(page, "Who first?")
            first = tool_card(page, "call_1").get_by_test_id("server-question")
            expect(first).to_contain_text("Server asker asks: Who should we contact?")
            other.goto(url)
            ask(other, "Who second?")
            second = tool_card(other, "call_1").get_by_test_id("server-question")
            expect(second).to_contain_text("Server asker asks: Who should we contact?")

            second.locator('[data-field="name"] input').fill("Bea")
            second.get_by_role("button", name="Send").click()
            expect(last_answer(other)).to_have_text("Bea it is.")
            expect(first).to_be_visible()  # still waiting for its own answer
            first.locator('[data-field="name"] input').fill("Ann")
            first.get_by_role("button", name="Send").click()
            expect(last_answer(page)).to_have_text("Ann it is.")
            expect_run_over(page)
        finally:
            other.close()
