"""The web page (Chromium) on one replica follows a run another replica owns, and says so when that
replica stops before the run ends: at once in the answer, and as a notice whenever the chat opens later."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import serving
from playwright.sync_api import Page, expect
from replicas import postgres_schema
from server_helpers import Gate, serve_in_thread

from toolbridge.testing import ScriptedModelServer, Turn

pytestmark = pytest.mark.slow

INTERRUPTED = "interrupted: the server running it stopped; its completed steps are kept"


def test_the_page_says_a_run_was_interrupted_live_and_when_the_chat_opens_later(
    tmp_path: Path, page: Page
) -> None:
    gate = Gate()
    (tmp_path / "owner").mkdir()
    (tmp_path / "page").mkdir()
    with (
        ScriptedModelServer([Turn.text("Never sent.").expecting(gate)]) as model,
        postgres_schema("runs_page") as url,
    ):
        try:
            with serving(tmp_path / "page", model, page, db_url=url) as page_url:
                with serve_in_thread(tmp_path / "owner", model, db_url=url) as owner:
                    http = owner.http()
                    chat_id = http.post("/api/chats", json={"title": "Cut short"}).json()["id"]
                    page.goto(f"{page_url}#/chats/{chat_id}")
                    expect(page.get_by_test_id("connection")).to_have_text("Live")
                    http.post(f"/api/chats/{chat_id}/messages", json={"content": "Take your time."})
                    expect(page.get_by_test_id("user-text")).to_have_text("Take your time.")
                    assert gate.arrived.wait(20)
                # The owner stopped (past its grace period of 0 s): the run ended interrupted.
                expect(page.get_by_test_id("turn-note")).to_have_text(INTERRUPTED)
                expect(page.get_by_role("button", name="Send")).to_be_enabled()

                page.reload()
                notice = page.get_by_test_id("run-notice")
                expect(notice).to_have_text(f"The last answer was {INTERRUPTED}.")
                expect(page.get_by_test_id("user-text")).to_have_text("Take your time.")  # it was kept
        finally:
            gate.released.set()
