"""A server that asks before a message is sent (MCP 2026-07-28: a prompt got or a resource read answers
`input_required`, no tool call in flight) is asked on the chat's page: a form of its own in the chat,
answered over the same route as a tool call's question; the prompt or attachment then goes with the
answer. Declined, cancelled or unanswered in time, the message is refused with a 422 saying so.

The server is tests/servers/modern.py over stdio: its `greeting` prompt and `letter://{topic}` resource
ask "Who is this for?" (a required `name`)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from browser_helpers import ARTIFACTS, REPO, expect_run_over, last_answer, serving
from playwright.sync_api import Page, expect
from server_helpers import EventReader, RunningServer, serve_in_thread

from toolbridge.testing import ScriptedModelServer, Turn

MODERN = {"modern": {"command": sys.executable, "args": [str(REPO / "tests" / "servers" / "modern.py")]}}
NO_TOOLS = {"default": {"tool_calling": False}}
GREETING = {"content": "", "prompt": {"name": "greeting", "server": "modern"}}


@pytest.mark.slow
def test_a_prompt_and_an_attachment_whose_server_asks_first_show_its_form_in_the_chat(
    tmp_path: Path, page: Page
) -> None:
    script = [
        Turn.text("Hello Ada!").expecting(lambda r: r.last_message["content"] == "Write a greeting for Ada."),
        Turn.text("A letter.").expecting(
            lambda r: r.last_message["content"][-1]["text"].endswith("Dear Grace, about tea.")
        ),
    ]
    with (
        ScriptedModelServer(script) as model,
        serving(tmp_path, model, page, mcpServers=MODERN, agents=NO_TOOLS) as url,
    ):
        page.goto(url)
        message = page.get_by_label("Message")
        message.press_sequentially("/greet")
        expect(page.get_by_test_id("prompt-option")).to_have_count(1)
        message.press("Enter")  # chooses it
        expect(page.get_by_test_id("prompt-chip")).to_contain_text("/greeting")
        page.get_by_role("button", name="Send").click()

        question = page.get_by_test_id("opening-question")
        expect(question).to_contain_text("Server modern asks: Who is this for?")
        expect(page.get_by_test_id("tool-card")).to_have_count(0)  # no call: the form stands alone
        question.get_by_role("button", name="Send").click()
        expect(question.get_by_test_id("server-question-status")).to_have_text("name is required")
        question.locator('[data-field="name"] input').fill("Ada")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-page-opening-question.png"))
        question.get_by_role("button", name="Send").click()
        expect(question).to_have_text("You answered the server: accept.")
        expect(page.get_by_test_id("user-text").last).to_have_text("Write a greeting for Ada.")
        expect(last_answer(page)).to_have_text("Hello Ada!")
        expect_run_over(page)

        page.get_by_role("button", name="Attach a resource").click()
        picker = page.get_by_test_id("resource-picker")
        picker.get_by_test_id("resource-template-option").filter(has_text="letter://{topic}").click()
        picker.get_by_label("topic for letter://{topic}").fill("tea")
        picker.get_by_role("button", name="Attach").click()
        message.fill("What is it about?")
        page.get_by_role("button", name="Send").click()
        question = page.get_by_test_id("opening-question").last
        expect(question).to_contain_text("Server modern asks: Who is this for?")
        question.locator('[data-field="name"] input').fill("Grace")
        question.get_by_role("button", name="Send").click()
        expect(last_answer(page)).to_have_text("A letter.")
        expect_run_over(page)

        # Declined: the message is not sent, and the chat says why.
        message.press_sequentially("/greet")
        expect(page.get_by_test_id("prompt-option")).to_have_count(1)
        message.press("Enter")
        page.get_by_role("button", name="Send").click()
        question = page.get_by_test_id("opening-question").last
        question.get_by_role("button", name="Decline").click()
        expect(page.get_by_test_id("run-notice").last).to_have_text(
            "cannot get the prompt 'greeting': you declined server 'modern''s question 'Who is this for?'"
        )
        expect_run_over(page)


@pytest.fixture
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[RunningServer]:
    """`toolbridge serve` with the modern server; `request.param`: the config's `server` section, and
    more settings of the modern server."""
    settings, modern = getattr(request, "param", ({}, {}))
    servers = {"modern": {**MODERN["modern"], **modern}}
    with (
        ScriptedModelServer([]) as model,
        serve_in_thread(tmp_path, model, mcp_servers=servers, agents=NO_TOOLS, server=settings) as running,
    ):
        yield running


@contextmanager
def posted(server: RunningServer, chat_id: int, body: dict[str, Any]) -> Iterator[Future[httpx.Response]]:
    """The message posted on a thread of its own: its answer waits for the server's question."""
    with ThreadPoolExecutor(1) as pool:
        yield pool.submit(server.http().post, f"/api/chats/{chat_id}/messages", json=body)


@pytest.mark.parametrize(
    ("body", "action", "refused"),
    [
        (GREETING, "decline", "cannot get the prompt 'greeting': you declined"),
        (
            {"content": "Read it.", "attachments": [{"uri": "letter://tea", "server": "modern"}]},
            "cancel",
            "cannot attach 'letter://tea': you cancelled",
        ),
    ],
)
def test_a_declined_or_cancelled_question_refuses_the_message_with_a_422_naming_it(
    server: RunningServer, body: dict[str, Any], action: str, refused: str
) -> None:
    http = server.http()
    chat_id = http.post("/api/chats", json={}).json()["id"]
    with EventReader(http, chat_id) as events, posted(server, chat_id, body) as message:
        question = events.until("server_request")[-1]
        assert question["opening"] is True
        assert question["call_id"] is None
        assert question["message"] == "Who is this for?"
        url = f"/api/chats/{chat_id}/server-requests/{question['request_id']}"
        assert http.post(url, json={"action": action}).status_code == 204
        answered = events.until("server_request_answered")[-1]
        assert answered == {**answered, "opening": True, "action": action}
        response = message.result()
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["message"] == f"{refused} server 'modern''s question 'Who is this for?'"
    assert http.get(f"/api/chats/{chat_id}/messages").json() == []  # nothing was sent


@pytest.mark.parametrize(
    ("server", "why"),
    [
        (({"approval_timeout": 0.2}, {}), "within 0.2 s (server.approval_timeout)"),
        (
            ({}, {"timeout": 1}),  # the server's own timeout, which bounds the read and its question
            "in time (Server 'modern' did not finish getting the prompt 'greeting' within 1 s. "
            "Check the server, or raise 'timeout' in its config.)",
        ),
    ],
    indirect=["server"],
)
def test_a_question_nobody_answers_in_time_refuses_the_message(server: RunningServer, why: str) -> None:
    http = server.http()
    chat_id = http.post("/api/chats", json={}).json()["id"]
    response = http.post(f"/api/chats/{chat_id}/messages", json=GREETING)
    assert response.status_code == 422, response.text
    assert response.json()["error"] == {
        "message": f"cannot get the prompt 'greeting': nobody answered server 'modern''s question "
        f"'Who is this for?' {why}",
        "type": "invalid_request_error",
        "param": "prompt",
        "code": None,
    }
