"""The page's Settings view, in Chromium against `toolbridge serve`'s app (browser_helpers): each setting
(theme, the keys that send, tool cards folded or open, the agent new chats start with) takes effect at
once and is still in effect after a reload; "About this server" names toolbridge's version and who the
page is signed in as, and forgets the tab's token.

Screenshots go to test-artifacts/ (gitignored): web-settings.png (1280x800), web-settings-390px.png.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from browser_helpers import ARTIFACTS, expect_run_over, last_answer, serving, tool_card, web_db_url
from playwright.sync_api import Page, Route, expect
from users_helpers import add_user, bearer

from toolbridge import __version__
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

TWO_AGENTS = {"agents": {"reviewer": {"description": "Checks the figures twice."}}}
LIGHT_BACKGROUND = "rgb(246, 247, 249)"
DARK_BACKGROUND = "rgb(20, 23, 28)"


def background(page: Page) -> str:
    return str(page.evaluate("getComputedStyle(document.body).backgroundColor"))


def open_settings(page: Page) -> None:
    page.get_by_test_id("nav-settings").click()
    expect(page.get_by_test_id("settings-view")).to_be_visible()


def test_each_setting_takes_effect_at_once_and_after_a_reload(tmp_path: Path, page: Page) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"}, id="call_1")),
        Turn.text("It is 42."),
    ]
    page.emulate_media(color_scheme="light")
    page.set_viewport_size({"width": 1280, "height": 800})
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **TWO_AGENTS) as url:
        page.goto(url)
        expect(page.get_by_test_id("agent-select")).to_have_value("default")  # the first, as before
        open_settings(page)
        expect(page.get_by_label("As the system")).to_be_checked()
        expect(page.get_by_label("Enter sends; Shift+Enter starts a new line")).to_be_checked()
        expect(page.get_by_label("Folded: a click on Result shows it")).to_be_checked()

        # About this server: no users and no token here.
        expect(page.get_by_test_id("about-version")).to_have_text(__version__)
        expect(page.get_by_test_id("about-caller")).to_have_text(
            "No sign-in: this server has no users and no token"
        )
        expect(page.get_by_test_id("forget-token")).to_be_hidden()

        # An explicit theme wins over the system's, at once.
        assert background(page) == LIGHT_BACKGROUND
        page.get_by_label("Dark").check()
        expect(page.locator("body")).to_have_css("background-color", DARK_BACKGROUND)

        page.get_by_label("Ctrl+Enter sends; Enter starts a new line").check()
        page.get_by_label("Open: results shown as they come").check()
        page.get_by_label("Start new chats with").select_option("reviewer")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-settings.png"), full_page=True)

        # The chat view: the new chat is the reviewer's, and the message box follows the keys chosen.
        page.get_by_test_id("nav-chat").click()
        expect(page.get_by_test_id("agent-select")).to_have_value("reviewer")
        expect(page.locator("#chat-subtitle")).to_have_text("with reviewer")
        message_box = page.get_by_label("Message")
        expect(message_box).to_have_attribute(
            "placeholder", "Ask something… (Ctrl+Enter sends, Enter starts a new line, / picks a prompt)"
        )
        message_box.fill("What is")
        message_box.press("Enter")  # a new line, not a message
        message_box.press_sequentially("15 + 27?")
        expect(message_box).to_have_value("What is\n15 + 27?")
        expect(page.get_by_test_id("user-message")).to_have_count(0)
        message_box.press("Control+Enter")
        expect(last_answer(page)).to_have_text("It is 42.")
        expect_run_over(page)
        # The card's result is open without a click.
        card = tool_card(page, "call_1")
        expect(card.get_by_test_id("tool-result-body")).to_be_visible()
        expect(card.get_by_test_id("tool-result-body")).to_have_text("42")

        # After a reload: every setting still applies, the theme before the page's modules have run
        # (no light flash), the stored card open too.
        held: list[Route] = []
        page.route("**/static/app.js", lambda route: held.append(route))
        page.reload(wait_until="commit")
        expect(page.locator("body")).to_have_css("background-color", DARK_BACKGROUND)
        assert len(held) == 1
        held[0].continue_()
        page.unroute("**/static/app.js")
        expect(tool_card(page, "call_1").get_by_test_id("tool-result-body")).to_be_visible()
        expect(page.get_by_label("Message")).to_have_attribute(
            "placeholder", "Ask something… (Ctrl+Enter sends, Enter starts a new line, / picks a prompt)"
        )
        page.goto(url)  # a fresh page starts with the default agent, not the first
        expect(page.get_by_test_id("agent-select")).to_have_value("reviewer")
        # A chat of another agent shows that agent; New chat from there goes back to the default.
        other = httpx.post(f"{url}api/chats", json={"agent": "default"}).json()
        page.goto(f"{url}#/chats/{other['id']}")
        expect(page.get_by_test_id("agent-select")).to_have_value("default")
        page.get_by_test_id("new-chat").click()
        expect(page.get_by_test_id("agent-select")).to_have_value("reviewer")
        open_settings(page)
        expect(page.get_by_label("Dark")).to_be_checked()
        expect(page.get_by_label("Ctrl+Enter sends; Enter starts a new line")).to_be_checked()
        expect(page.get_by_label("Open: results shown as they come")).to_be_checked()
        expect(page.get_by_label("Start new chats with")).to_have_value("reviewer")

        # Light wins over a dark system; "As the system" follows it again.
        page.emulate_media(color_scheme="dark")
        expect(page.locator("body")).to_have_css("background-color", DARK_BACKGROUND)
        page.get_by_label("Light").check()
        expect(page.locator("body")).to_have_css("background-color", LIGHT_BACKGROUND)
        page.get_by_label("As the system").check()
        expect(page.locator("body")).to_have_css("background-color", DARK_BACKGROUND)

        page.set_viewport_size({"width": 390, "height": 844})
        expect(page.get_by_label("Start new chats with")).to_be_in_viewport()
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
        page.screenshot(path=str(ARTIFACTS / "web-settings-390px.png"), full_page=True)


def test_about_names_the_user_and_forgets_the_tabs_key(tmp_path: Path, page: Page) -> None:
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page) as url:
        alice = add_user(web_db_url(tmp_path), "alice")
        health = httpx.get(f"{url}api/health", headers=bearer(alice)).json()
        assert health["version"] == __version__
        assert health["caller"] == {"user": "alice", "admin": False}

        page.goto(f"{url}#/settings")
        dialog = page.get_by_role("dialog", name="Access token")
        dialog.get_by_label("Token or API key").fill(alice)
        dialog.get_by_role("button", name="Connect").click()
        expect(page.get_by_test_id("about-caller")).to_have_text("Signed in as alice")
        expect(page.get_by_test_id("about-version")).to_have_text(__version__)

        page.get_by_role("button", name="Forget the token in this tab").click()
        expect(page.get_by_test_id("forget-token")).to_be_hidden()
        assert page.evaluate("sessionStorage.getItem('toolbridge.token')") is None
        page.reload()  # the key is gone: the page asks for it again
        expect(page.get_by_role("dialog", name="Access token")).to_be_visible()
