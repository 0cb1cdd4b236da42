"""The composer's resource picker and `/` prompt menu in a real browser (Chromium under Playwright)
against `toolbridge serve` with tests/servers/library.py: a picked resource goes with the message, and a
prompt chosen from the menu starts the chat with its messages."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from browser_helpers import ARTIFACTS, REPO, expect_run_over, last_answer, serving
from playwright.sync_api import Page, expect

from toolbridge.testing import ScriptedModelServer, Turn

pytestmark = pytest.mark.slow

LIBRARY = {"library": {"command": sys.executable, "args": [str(REPO / "tests" / "servers" / "library.py")]}}


def test_a_picked_resource_goes_with_the_message_and_a_prompt_from_the_slash_menu_starts_the_chat(
    tmp_path: Path, page: Page
) -> None:
    script = [
        Turn.text("It says to read it first.").expecting(
            lambda request: (
                request.last_message["content"][1]
                == {"type": "text", "text": "Attached note://readme (text/plain):\nRead me first."}
            )
        ),
        Turn.text("Nice Rust.").expecting(
            lambda request: request.last_message["content"] == "Review this rust code:\nfn main() {}"
        ),
        Turn.text("Followed up.").expecting(
            lambda request: (
                [m["content"] for m in request.messages[-3:]]
                == ["Earlier question", "Earlier answer", "And now?"]
            )
        ),
    ]
    with (
        ScriptedModelServer(script) as model,
        serving(
            tmp_path, model, page, mcpServers=LIBRARY, agents={"default": {"tool_calling": False}}
        ) as url,
    ):
        page.goto(url)
        page.get_by_role("button", name="Attach a resource").click()
        page.get_by_test_id("resource-option").filter(has_text="note://readme").click()
        expect(page.get_by_test_id("attachment-chip")).to_have_text("📎 note://readme×")
        expect(page.get_by_test_id("resource-picker")).to_be_hidden()
        page.get_by_label("Message").fill("What does it say?")
        page.get_by_role("button", name="Send").click()

        expect(page.get_by_test_id("user-attachment")).to_have_text("📎 note://readme")
        expect(last_answer(page)).to_have_text("It says to read it first.")
        expect(page.get_by_test_id("attachment-chip")).to_have_count(0)
        expect_run_over(page)

        message = page.get_by_label("Message")
        message.press_sequentially("/re")
        menu = page.get_by_test_id("prompt-menu")
        expect(menu.get_by_test_id("prompt-option")).to_have_count(1)  # "review"; not "discuss", "greet"
        message.press("Enter")  # chooses the first prompt of the menu
        expect(page.get_by_test_id("prompt-chip")).to_contain_text("/review")
        page.get_by_label("code for /review").fill("fn main() {}")
        page.get_by_label("language for /review").fill("rust")
        page.get_by_role("button", name="Send").click()

        expect(page.get_by_test_id("user-text").last).to_have_text("Review this rust code:\nfn main() {}")
        expect(last_answer(page)).to_have_text("Nice Rust.")
        expect_run_over(page)

        # A prompt with messages before its question: they are shown above it.
        message.press_sequentially("/fol")
        message.press("Enter")
        page.get_by_role("button", name="Send").click()
        opening = page.get_by_test_id("prompt-opening").last
        expect(opening.get_by_test_id("user-text")).to_have_text("Earlier question")
        expect(opening.get_by_test_id("assistant-text")).to_have_text("Earlier answer")
        expect(page.get_by_test_id("user-text").last).to_have_text("And now?")
        expect(last_answer(page)).to_have_text("Followed up.")
        expect_run_over(page)

        # One that ends with the assistant's turn is shown, and waits for your reply.
        message.press_sequentially("/gre")
        message.press("Enter")
        page.get_by_role("button", name="Send").click()
        expect(last_answer(page)).to_have_text("Hi, how can I help?")
        expect(page.get_by_test_id("user-text").last).to_have_text("Hello!")
        expect_run_over(page)
        # A reload draws both from the stored chat, the attachment included.
        page.reload()
        expect(page.get_by_test_id("user-attachment")).to_have_text("📎 note://readme")
        expect(page.get_by_test_id("user-text")).to_have_text(
            [
                "What does it say?",
                "Review this rust code:\nfn main() {}",
                "Earlier question",
                "And now?",
                "Hello!",
            ]
        )
        expect(last_answer(page)).to_have_text("Hi, how can I help?")


def test_a_template_is_filled_in_with_the_servers_completions_and_so_are_prompt_arguments(
    tmp_path: Path, page: Page
) -> None:
    script = [
        Turn.text("A classic.").expecting(
            lambda request: (
                request.last_message["content"][1]
                == {"type": "text", "text": "Attached shelf://dune (text/plain):\nThe book dune."}
            )
        ),
        Turn.text("Nice Rust.").expecting(
            lambda request: request.last_message["content"] == "Review this rust code:\nfn main() {}"
        ),
    ]
    with (
        ScriptedModelServer(script) as model,
        serving(
            tmp_path, model, page, mcpServers=LIBRARY, agents={"default": {"tool_calling": False}}
        ) as url,
    ):
        page.goto(url)
        page.get_by_role("button", name="Attach a resource").click()
        picker = page.get_by_test_id("resource-picker")
        expect(picker.get_by_test_id("resource-template-option")).to_have_count(
            2
        )  # note://{name}, shelf://{book}
        picker.get_by_test_id("resource-template-option").filter(has_text="shelf://{book}").click()
        book = picker.get_by_label("book for shelf://{book}")
        expect(book).to_be_focused()
        expect(picker.get_by_role("button", name="Attach")).to_be_disabled()
        book.press_sequentially("d")
        suggestions = picker.get_by_test_id("suggestion")
        expect(suggestions).to_have_text(["dune"])  # from the server's completion/complete, not "emma"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-page-template-completion.png"))
        suggestions.first.click()
        expect(book).to_have_value("dune")
        expect(picker.get_by_test_id("template-uri")).to_have_text("shelf://dune")
        picker.get_by_role("button", name="Attach").click()
        expect(page.get_by_test_id("attachment-chip")).to_have_text("📎 shelf://dune×")
        page.get_by_label("Message").fill("Which book?")
        page.get_by_role("button", name="Send").click()
        expect(last_answer(page)).to_have_text("A classic.")
        expect_run_over(page)

        message = page.get_by_label("Message")
        message.press_sequentially("/re")
        expect(page.get_by_test_id("prompt-menu").get_by_test_id("prompt-option")).to_have_count(1)
        message.press("Enter")
        page.get_by_label("code for /review").fill("fn main() {}")
        language = page.get_by_label("language for /review")
        language.press_sequentially("r")
        chip = page.get_by_test_id("prompt-chip")
        expect(chip.get_by_test_id("suggestion")).to_have_text(["rust"])
        page.screenshot(path=str(ARTIFACTS / "web-page-prompt-completion.png"))
        chip.get_by_test_id("suggestion").click()
        expect(language).to_have_value("rust")
        expect(chip.get_by_test_id("suggestion")).to_have_count(0)
        page.get_by_role("button", name="Send").click()
        expect(page.get_by_test_id("user-text").last).to_have_text("Review this rust code:\nfn main() {}")
        expect(last_answer(page)).to_have_text("Nice Rust.")
        expect_run_over(page)


def test_templates_are_expanded_as_rfc_6570_says(tmp_path: Path, page: Page) -> None:
    cases = [
        ("note://{name}", {"name": "a b/c"}, "note://a%20b%2Fc"),  # one segment: "/" encoded
        ("file://{+path}", {"path": "/home/a b"}, "file:///home/a%20b"),  # reserved kept
        ("api://items{?q,page}", {"q": "x y", "page": "2"}, "api://items?q=x%20y&page=2"),
        ("api://items{?q,page}", {"q": "x"}, "api://items?q=x"),  # an empty one is left out
        ("repo://{owner}{/path*}", {"owner": "me", "path": "src"}, "repo://me/src"),
    ]
    with ScriptedModelServer([]) as model, serving(tmp_path, model, page) as url:
        page.goto(url)
        expanded = page.evaluate(
            """async (cases) => {
                const { expandTemplate, templateVariables } = await import("/static/modules/uri_template.js");
                return cases.map(([template, values]) => [expandTemplate(template, values), templateVariables(template)]);
            }""",
            [[template, values] for template, values, _ in cases],
        )
    assert [uri for uri, _ in expanded] == [uri for _, _, uri in cases]
    assert [names for _, names in expanded] == [
        ["name"],
        ["path"],
        ["q", "page"],
        ["q", "page"],
        ["owner", "path"],
    ]
