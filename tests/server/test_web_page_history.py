"""The chat history in a real browser (Chromium under Playwright, see browser_helpers.py): searching it
by title, renaming a chat and deleting one; and the API under it, where a user reaches only their own
chats."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_helpers import serving
from playwright.sync_api import Dialog, Page, expect
from server_helpers import serve_in_thread
from users_helpers import add_user, bearer

from toolbridge.testing import ScriptedModelServer

pytestmark = pytest.mark.slow


def test_the_history_is_searched_and_a_chat_renamed_and_deleted(tmp_path: Path, page: Page) -> None:
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page) as url:
        for title in ["Alpha plans", "Beta notes", "Gamma alpha"]:
            assert page.request.post(f"{url}api/chats", data={"title": title}).status == 201
        page.goto(url)
        items = page.get_by_test_id("chat-item")
        expect(items).to_have_count(3)

        page.get_by_test_id("chat-search").fill("ALPHA")
        expect(items).to_have_count(2)
        expect(items.filter(has_text="Beta notes")).to_have_count(0)

        page.once("dialog", lambda dialog: dialog.accept("Alpha, renamed"))
        alpha = page.get_by_test_id("chat-list").locator("li").filter(has_text="Alpha plans")
        alpha.hover()
        alpha.get_by_test_id("chat-rename").click()
        expect(items.filter(has_text="Alpha, renamed")).to_have_count(1)

        def confirm(dialog: Dialog) -> None:
            assert "Gamma alpha" in dialog.message
            dialog.accept()

        page.once("dialog", confirm)
        gamma = page.get_by_test_id("chat-list").locator("li").filter(has_text="Gamma alpha")
        gamma.hover()
        gamma.get_by_test_id("chat-delete").click()
        expect(items).to_have_count(1)

        page.get_by_test_id("chat-search").fill("")
        expect(items).to_have_count(2)
        titles = [chat["title"] for chat in page.request.get(f"{url}api/chats").json()]
        assert sorted(titles) == ["Alpha, renamed", "Beta notes"]


def test_a_search_finds_only_the_users_own_chats(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    with ScriptedModelServer([]) as model, serve_in_thread(tmp_path, model) as server:
        alice = server.http(headers=bearer(add_user(db, "alice")))
        bob = server.http(headers=bearer(add_user(db, "bob")))
        mine = alice.post("/api/chats", json={"title": "alice's plans"}).json()["id"]
        bob.post("/api/chats", json={"title": "bob's plans"})
        assert [chat["id"] for chat in alice.get("/api/chats", params={"q": "plans"}).json()] == [mine]
        renamed = alice.patch(f"/api/chats/{mine}", json={"title": "alice's schemes"})
        assert renamed.json()["title"] == "alice's schemes"
        assert alice.get("/api/chats", params={"q": "plans"}).json() == []
        assert alice.delete(f"/api/chats/{mine}").status_code == 204
        assert alice.get(f"/api/chats/{mine}/messages").status_code == 404
