"""The web page with users: it asks for the key once (a dialog), keeps it for the tab's session
(sessionStorage: a reload does not ask again), sends it on every request and event stream, and shows
only the user's own chats. Chromium against `toolbridge serve`'s app (browser_helpers)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from browser_helpers import ask, expect_run_over, last_answer, serving, web_db_url
from playwright.sync_api import Page, expect
from users_helpers import add_user, bearer

from toolbridge.testing import ScriptedModelServer, Turn

pytestmark = pytest.mark.slow


def test_the_page_asks_for_a_key_once_and_shows_only_the_users_chats(tmp_path: Path, page: Page) -> None:
    db = web_db_url(tmp_path)
    with ScriptedModelServer([Turn.text("Hello, alice.")]) as model, serving(tmp_path, model, page) as url:
        alice, bob = add_user(db, "alice"), add_user(db, "bob")
        created = httpx.post(f"{url}api/chats", json={"title": "bob's secret plans"}, headers=bearer(bob))
        assert created.status_code == 201

        page.goto(url)
        dialog = page.get_by_role("dialog", name="Access token")
        dialog.get_by_label("Token or API key").fill(bob[:-3] + "xyz")
        dialog.get_by_role("button", name="Connect").click()
        expect(dialog.get_by_text("That token was not accepted")).to_be_visible()
        dialog.get_by_label("Token or API key").fill(alice)
        dialog.get_by_role("button", name="Connect").click()
        expect(dialog).to_be_hidden()

        ask(page, "Who am I?")  # the run's events come over the event stream, which needs the key too
        expect(last_answer(page)).to_have_text("Hello, alice.")
        expect_run_over(page)
        items = page.get_by_test_id("chat-item")
        expect(items.filter(has_text="Who am I?")).to_have_count(1)
        expect(items.filter(has_text="bob's secret plans")).to_have_count(0)

        page.reload()  # kept for the session: no second question
        expect(page.get_by_test_id("chat-item").filter(has_text="Who am I?")).to_have_count(1)
        expect(page.get_by_role("dialog", name="Access token")).to_be_hidden()
