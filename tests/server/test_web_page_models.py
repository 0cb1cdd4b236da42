"""The chat's model picker in a real browser (Chromium under Playwright): a new chat starts with the
model picked, an open chat switches for its next answer, and each answer says which model wrote it, also
after a reload."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import ARTIFACTS, serving
from playwright.sync_api import Page, expect

from toolbridge.testing import ScriptedModelServer, Turn

pytestmark = pytest.mark.slow


def test_the_model_picked_answers_and_each_answer_names_its_model(tmp_path: Path, page: Page) -> None:
    page.set_viewport_size({"width": 1280, "height": 800})
    with ScriptedModelServer([Turn.text("From the scripted model.")]) as model:
        scripted = {"provider": "openai-compatible", "base_url": model.base_url, "model": "scripted"}
        models = {"scripted": scripted, "stand-in": {"provider": "demo"}}
        with serving(tmp_path, model, page, models=models) as url:
            page.goto(url)
            picker = page.get_by_test_id("model-select")
            expect(picker.locator("option")).to_have_text(
                ["Agent's model (scripted)", "scripted", "stand-in"]
            )
            picker.select_option("stand-in")  # a new chat: created with it
            page.get_by_test_id("new-chat").click()  # the view drawn again keeps the pick
            expect(picker).to_have_value("stand-in")

            page.get_by_test_id("composer-input").fill("Hello")
            page.get_by_test_id("send-button").click()
            labels = page.get_by_test_id("answer-model")
            expect(labels).to_have_text([" · stand-in"])
            expect(page.get_by_test_id("run-status")).to_have_text("")
            (chat,) = page.request.get(f"{url}api/chats").json()
            assert chat["model"] == "stand-in"

            picker.select_option("")  # the open chat: its next answer is its agent's model's
            page.get_by_test_id("composer-input").fill("Again")
            page.get_by_test_id("send-button").click()
            expect(labels).to_have_text([" · stand-in", " · scripted"])
            expect(page.get_by_test_id("assistant-text").last).to_have_text("From the scripted model.")
            page.screenshot(path=str(ARTIFACTS / "web-model-picker-1280.png"))

            page.reload()
            expect(page.get_by_test_id("answer-model")).to_have_text([" · stand-in", " · scripted"])
            expect(page.get_by_test_id("model-select")).to_have_value("")

            page.set_viewport_size({"width": 390, "height": 844})
            page.reload()  # a phone opening the chat
            expect(page.get_by_test_id("answer-model")).to_have_count(2)
            expect(page.get_by_test_id("model-select")).to_be_visible()
            assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            page.screenshot(path=str(ARTIFACTS / "web-model-picker-390.png"))
