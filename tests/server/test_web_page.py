"""The web page in a real browser: Playwright for Python driving Debian's Chromium (/usr/bin/chromium)
against what `toolbridge serve` serves (its app on a real 127.0.0.1 socket), with the scripted model
behind the real OpenAI wire protocol and tests/servers/basic.py as a stdio MCP server.

Every wait is Playwright's auto-waiting on the page's state (`expect(...)`), never a sleep (helpers in
browser_helpers.py, fixtures in conftest.py). Screenshots go to test-artifacts/ (gitignored):
web-page.png (a chat with a declined and an approved call), web-page-approval.png (a call waiting for
approval) and web-page-servers.png (the servers view).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from browser_helpers import (
    ARTIFACTS,
    ECHO_NEEDS_APPROVAL,
    answers_tool_result,
    ask,
    expect_run_over,
    last_answer,
    serving,
    tool_card,
)
from playwright.sync_api import Page, Route, expect

from toolbridge.server import STATIC_DIR
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

# -- tests ---------------------------------------------------------------------------------------------


def test_a_question_shows_its_tool_card_and_answer_and_the_chat_is_in_history_after_a_reload(
    tmp_path: Path, page: Page
) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"}, id="call_calc")),
        Turn.text("15 + 27 = **42**.", expect=answers_tool_result("42")),
    ]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page) as url:
        page.goto(url)
        expect(page.get_by_label("Agent")).to_have_value("default")
        ask(page, "What is 15 + 27?")

        expect(page.get_by_test_id("user-text")).to_have_text("What is 15 + 27?")
        card = tool_card(page, "call_calc")
        expect(card.get_by_test_id("tool-name")).to_have_text("calculate")
        expect(card.get_by_test_id("tool-arguments")).to_contain_text('"expression": "15 + 27"')
        expect(card).to_have_attribute("data-state", "done")
        expect(card.get_by_test_id("tool-state")).to_have_text("Done")
        expect(card.get_by_test_id("tool-server")).to_have_text("on native")
        expect(card.get_by_test_id("tool-duration")).not_to_be_empty()
        card.get_by_test_id("tool-result").locator("summary").click()
        expect(card.get_by_test_id("tool-result-body")).to_have_text("42")

        expect(last_answer(page)).to_have_text("15 + 27 = 42.")
        expect(last_answer(page).locator("strong")).to_have_text("42")  # Markdown, rendered
        expect_run_over(page)
        chat_url = page.url
        assert "#/chats/" in chat_url

        # The statistics view counts the call.
        page.get_by_role("link", name="Stats").click()
        row = page.get_by_test_id("stats-row").filter(has_text="calculate")
        expect(row).to_contain_text("native")
        expect(row).to_contain_text("100%")

        # A reload lands in the same chat, drawn again from the stored messages.
        page.go_back()
        expect(page).to_have_url(chat_url)
        page.reload()
        expect(tool_card(page, "call_calc")).to_have_attribute("data-state", "done")
        expect(last_answer(page)).to_have_text("15 + 27 = 42.")

        # And the chat is in the history: a click on it opens it again.
        page.get_by_role("button", name="New chat").click()
        expect(page.get_by_test_id("empty-chat")).to_be_visible()
        history_item = page.get_by_test_id("chat-item").filter(has_text="What is 15 + 27?")
        expect(history_item).to_have_count(1)
        history_item.click()
        expect(history_item).to_have_attribute("aria-current", "true")
        assert page.url == chat_url
        expect(page.get_by_test_id("user-text")).to_have_text("What is 15 + 27?")
        stored_card = tool_card(page, "call_calc")
        expect(stored_card).to_have_attribute("data-state", "done")
        expect(stored_card.get_by_test_id("tool-name")).to_have_text("calculate")
        expect(stored_card.get_by_test_id("tool-arguments")).to_contain_text('"expression": "15 + 27"')
        expect(stored_card.get_by_test_id("tool-result-body")).to_have_text("42", use_inner_text=False)
        expect(last_answer(page)).to_have_text("15 + 27 = 42.")
        expect(page.get_by_test_id("assistant-message")).to_have_count(1)


def test_calls_that_need_approval_wait_for_the_buttons_deny_declines_and_approve_runs(
    tmp_path: Path, page: Page
) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("echo", {"text": "not this"}, id="call_denied")),
        Turn.text("Understood, I did not echo it.", expect=answers_tool_result("declined")),
        Turn.tool_calls(ToolCallSpec("echo", {"text": "hello from the page"}, id="call_echo")),
        Turn.text(
            "The server echoed: *hello from the page*.\n\n| tool | result |\n|---|---|\n| echo | ok |",
            expect=answers_tool_result("hello from the page"),
        ),
    ]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **ECHO_NEEDS_APPROVAL) as url:
        page.goto(url)
        ask(page, "Echo something")
        denied = tool_card(page, "call_denied")
        expect(denied).to_have_attribute("data-state", "approval")
        expect(denied.get_by_test_id("tool-approval")).to_contain_text("the approval rule for tool 'echo'")
        assert len(model.requests) == 1  # the run waits for the user; the model is not asked again
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-page-approval.png"))
        denied.get_by_role("button", name="Deny").click()
        expect(denied).to_have_attribute("data-state", "declined")
        expect(last_answer(page)).to_have_text("Understood, I did not echo it.")
        expect_run_over(page)

        ask(page, "Please echo a greeting")
        card = tool_card(page, "call_echo")
        expect(card).to_have_attribute("data-state", "approval")
        card.get_by_role("button", name="Approve").click()
        expect(card).to_have_attribute("data-state", "done")
        expect(card.get_by_test_id("tool-approval")).to_be_hidden()
        expect(card.get_by_test_id("tool-server")).to_have_text("on basic")
        expect(card.get_by_test_id("tool-result-body")).to_have_text(
            "hello from the page", use_inner_text=False
        )
        expect(last_answer(page)).to_contain_text("The server echoed: hello from the page.")
        expect(last_answer(page).locator("em")).to_have_text("hello from the page")
        expect(last_answer(page).locator("table td").first).to_have_text("echo")
        expect_run_over(page)

        card.get_by_test_id("tool-result").locator("summary").click()
        page.screenshot(path=str(ARTIFACTS / "web-page.png"))

        # Stored, the declined call is still declined and the approved one done.
        page.reload()
        expect(tool_card(page, "call_denied")).to_have_attribute("data-state", "declined")
        expect(tool_card(page, "call_denied").get_by_test_id("tool-result-body")).to_contain_text(
            "The user declined this call", use_inner_text=False
        )
        expect(tool_card(page, "call_echo")).to_have_attribute("data-state", "done")
        expect(page.get_by_test_id("user-text")).to_have_text(["Echo something", "Please echo a greeting"])


def test_a_reload_in_the_middle_of_a_run_shows_the_run_again_and_its_approval_still_works(
    tmp_path: Path, page: Page
) -> None:
    script = [
        Turn.text("First answer."),
        Turn.text("Let me echo it.").then_tool_calls(ToolCallSpec("echo", {"text": "again"}, id="call_wait")),
        Turn.text("Echoed after the reload.", expect=answers_tool_result("again")),
    ]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **ECHO_NEEDS_APPROVAL) as url:
        page.goto(url)
        ask(page, "Say something")
        expect(last_answer(page)).to_have_text("First answer.")
        expect_run_over(page)
        ask(page, "Now echo")
        expect(tool_card(page, "call_wait")).to_have_attribute("data-state", "approval")

        page.reload()  # the server replays the run so far; the stored part of it is not shown twice
        card = tool_card(page, "call_wait")
        expect(card).to_have_attribute("data-state", "approval")
        expect(page.get_by_test_id("user-text")).to_have_text(["Say something", "Now echo"])
        expect(page.get_by_test_id("assistant-text")).to_have_text(["First answer.", "Let me echo it."])
        card.get_by_role("button", name="Approve").click()
        expect(card).to_have_attribute("data-state", "done")
        expect(last_answer(page)).to_have_text("Echoed after the reload.")
        expect_run_over(page)
        expect(page.get_by_test_id("tool-card")).to_have_count(1)


def test_images_in_a_tool_result_are_shown_once_the_run_is_over(tmp_path: Path, page: Page) -> None:
    script = [
        Turn.tool_calls(ToolCallSpec("media", {}, id="call_media")),
        Turn.text("Here is everything the tool returned.", expect=answers_tool_result("all kinds")),
    ]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **ECHO_NEEDS_APPROVAL) as url:
        page.goto(url)
        ask(page, "Show me the media")
        card = tool_card(page, "call_media")
        expect(card).to_have_attribute("data-state", "done")
        expect_run_over(page)
        card.get_by_test_id("tool-result").locator("summary").click()
        image = card.get_by_test_id("tool-result-image")
        expect(image).to_be_visible()
        expect(image).to_have_attribute("src", "data:image/png;base64," + PNG_1X1)
        assert image.evaluate("img => img.complete && img.naturalWidth") == 1
        expect(card.get_by_test_id("tool-result-body")).to_contain_text("Resource file:///notes.txt")


def test_stop_ends_a_slow_answer_and_the_page_says_so(tmp_path: Path, page: Page) -> None:
    slow = Turn.text("Counting: " + "one two three " * 300, chunk_size=3, delay=0.05)
    with ScriptedModelServer([slow]) as model, serving(tmp_path, model, page) as url:
        page.goto(url)
        ask(page, "Count for me")
        expect(last_answer(page)).to_contain_text("Counting")
        stop = page.get_by_test_id("stop-button")
        expect(stop).to_be_visible()
        stop.click()
        expect(page.get_by_test_id("message-list")).to_contain_text("The run was cancelled.")
        expect_run_over(page)
        expect(stop).to_be_hidden()
        assert model.wait_for_reply(1).client_disconnected


def test_model_text_is_shown_as_text_never_as_html(tmp_path: Path, page: Page) -> None:
    attack = "<img src=x onerror=\"document.title='owned'\"> [click](javascript:alert(1)) <b>bold?</b>"
    with ScriptedModelServer([Turn.text(attack)]) as model, serving(tmp_path, model, page) as url:
        page.goto(url)
        ask(page, "<i>hi</i>")
        expect(last_answer(page)).to_have_text(attack)
        expect_run_over(page)
        expect(page.get_by_test_id("user-text")).to_have_text("<i>hi</i>")
        transcript = page.get_by_test_id("message-list")
        expect(transcript.locator("img, b, i, a")).to_have_count(0)
        assert page.title() == "toolbridge"


def test_the_servers_panel_shows_each_server_state_and_tools(tmp_path: Path, page: Page) -> None:
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page, **ECHO_NEEDS_APPROVAL) as url:
        page.goto(url)
        page.get_by_role("link", name="Servers").click()
        basic = page.locator('[data-testid="server-card"][data-server="basic"]')
        expect(basic.get_by_test_id("server-state")).to_have_text("connected")
        basic.get_by_text("tools").click()
        expect(basic.locator('[data-tool="echo"]')).to_contain_text("read-only")
        native = page.locator('[data-testid="server-card"][data-server="native"]')
        native.get_by_text("tools").click()
        expect(native.locator('[data-tool="calculate"]')).to_be_visible()
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-page-servers.png"))


def test_a_server_with_a_token_asks_for_it_once(tmp_path: Path, page: Page) -> None:
    script = [Turn.text("Authorized.")]
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, token="s3cret") as url:
        page.goto(url)
        dialog = page.get_by_role("dialog", name="Access token")
        dialog.get_by_label("Token").fill("wrong")
        dialog.get_by_role("button", name="Connect").click()
        expect(dialog.get_by_text("That token was not accepted")).to_be_visible()
        dialog.get_by_label("Token").fill("s3cret")
        dialog.get_by_role("button", name="Connect").click()
        expect(dialog).to_be_hidden()
        expect(page.get_by_label("Agent")).to_have_value("default")
        ask(page, "Let me in")
        expect(last_answer(page)).to_have_text("Authorized.")
        expect_run_over(page)


PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


# -- the Markdown renderer, on its own ----------------------------------------------------------------

MARKDOWN_CASES = [
    (
        "**bold**, *em*, ~~gone~~ and `code`",
        "<p><strong>bold</strong>, <em>em</em>, <del>gone</del> and <code>code</code></p>",
    ),
    ("line one\nline two\n\nnext", "<p>line one<br>line two</p><p>next</p>"),
    ("# Title\ntext", "<h1>Title</h1><p>text</p>"),
    ("- a\n- b\n  - c", "<ul><li>a</li><li>b<ul><li>c</li></ul></li></ul>"),
    ("3. three\n4. four", '<ol start="3"><li>three</li><li>four</li></ol>'),
    ("> quoted", "<blockquote><p>quoted</p></blockquote>"),
    ("```py\nprint('<b>')\n```", "<pre><code class=\"language-py\">print('&lt;b&gt;')</code></pre>"),
    ("```\nstill streaming", "<pre><code>still streaming</code></pre>"),
    (
        "| a | b |\n|---|--:|\n| 1 | 2 |",
        '<div class="table-scroll"><table><thead><tr><th>a</th><th style="text-align: right">b</th></tr></thead>'
        '<tbody><tr><td>1</td><td style="text-align: right">2</td></tr></tbody></table></div>',
    ),
    (
        "[docs](https://example.com/a) and https://example.com/b.",
        '<p><a href="https://example.com/a" target="_blank" rel="noopener noreferrer">docs</a> and '
        '<a href="https://example.com/b" target="_blank" rel="noopener noreferrer">https://example.com/b</a>.</p>',
    ),
    ("snake_case_name and \\*not em\\*", "<p>snake_case_name and *not em*</p>"),
    # Never markup from the text, never a script URL, never a remote image.
    ("<script>alert(1)</script>", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"),
    ('<img src=x onerror="alert(1)">', '<p>&lt;img src=x onerror="alert(1)"&gt;</p>'),
    ("[click](javascript:alert(1))", "<p>[click](javascript:alert(1))</p>"),
    ("[page](data:text/html,<b>hi</b>)", "<p>[page](data:text/html,&lt;b&gt;hi&lt;/b&gt;)</p>"),
    (
        "![chart](https://example.com/c.png)",
        '<p><a href="https://example.com/c.png" target="_blank" rel="noopener noreferrer">chart</a></p>',
    ),
]


def test_the_markdown_renderer_builds_only_safe_elements(page: Page) -> None:
    """The page's modules served from the package directory (no server): each case rendered in Chromium."""
    origin = "http://page.test"

    def serve_static(route: Route) -> None:
        path = route.request.url.removeprefix(f"{origin}/static/")
        route.fulfill(path=STATIC_DIR / path, content_type="text/javascript")

    page.route(
        f"{origin}/",
        lambda route: route.fulfill(body="<!doctype html><title>test</title>", content_type="text/html"),
    )
    page.route(f"{origin}/static/**", serve_static)
    page.goto(f"{origin}/")
    rendered = page.evaluate(
        """async (texts) => {
            const { renderMarkdown } = await import("/static/modules/markdown.js");
            return texts.map((text) => {
                const box = document.createElement("div");
                box.append(renderMarkdown(text));
                return box.innerHTML;
            });
        }""",
        [text for text, _ in MARKDOWN_CASES],
    )
    wrong = [
        f"{text!r}\n  gave     {html}\n  expected {expected}"
        for (text, expected), html in zip(MARKDOWN_CASES, rendered, strict=True)
        if html != expected
    ]
    assert not wrong, "\n".join(wrong)


def test_asyncio_runs_between_browser_tests_while_the_workers_chromium_stays_open(chromium: object) -> None:
    """One Chromium serves every browser test of the worker, and Playwright marks its loop as the
    thread's running loop on each call: left marked between tests, every later `asyncio.run` (the
    worker's async tests) would refuse to start."""
    assert asyncio.run(asyncio.sleep(0, "ran")) == "ran"
