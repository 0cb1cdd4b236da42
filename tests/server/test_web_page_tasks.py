"""A tool call the server runs as a task, on the web page in Chromium: the task's status shows on the
running call's card, a form the task asks for is answered in the card, and Stop cancels the task at
the server (not only on the page)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import answers_tool_result, ask, expect_run_over, last_answer, serving, tool_card
from playwright.sync_api import Page, expect

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

NO_APPROVAL = {"default": {"approval": {"tools": {"hold": "never", "confirm_delete": "never"}}}}


def was_cancelled(tmp_path: Path, url: str, tag: str) -> str:
    """Asks the server itself (not the page) whether the task was cancelled."""
    config = tmp_path / "direct.json"
    config.write_text(json.dumps({"mcpServers": {"tasks": {"url": url}}}))
    command = [sys.executable, "-m", "toolbridge", "call", "was_cancelled", json.dumps({"tag": tag})]
    done = subprocess.run([*command, "--config", str(config)], capture_output=True, text=True, timeout=60)
    return done.stdout.strip() or done.stderr


def test_a_tasks_status_shows_on_its_card_and_stop_cancels_it_at_the_server(
    tmp_path: Path, page: Page, http_server: Callable[..., Any]
) -> None:
    server = http_server("tasks_server", "streamable-http")
    script = [Turn.tool_calls(ToolCallSpec("hold", {"tag": "page"}, id="call_hold"))]
    config = {"mcpServers": {"tasks": {"url": server.url}}, "agents": NO_APPROVAL}
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **config) as url:
        page.goto(url)
        ask(page, "Hold on")
        card = tool_card(page, "call_hold")
        expect(card).to_have_attribute("data-state", "running")
        expect(card.get_by_test_id("tool-progress-label")).to_have_text("holding page")
        page.get_by_role("button", name="Stop").click()
        expect(card).to_have_attribute("data-state", "cancelled")
        expect_run_over(page)

    assert was_cancelled(tmp_path, server.url, "page") == "true"


def test_a_form_asked_inside_a_task_is_answered_in_the_card(
    tmp_path: Path, page: Page, http_server: Callable[..., Any]
) -> None:
    server = http_server("tasks_server", "streamable-http")
    script = [
        Turn.tool_calls(ToolCallSpec("confirm_delete", {"filename": "a.txt"}, id="call_delete")),
        Turn.text("Deleted.", expect=answers_tool_result("deleted a.txt")),
    ]
    config = {"mcpServers": {"tasks": {"url": server.url}}, "agents": NO_APPROVAL}
    with ScriptedModelServer(script) as model, serving(tmp_path, model, page, **config) as url:
        page.goto(url)
        ask(page, "Delete a.txt")
        card = tool_card(page, "call_delete")
        question = card.get_by_test_id("server-question")
        expect(question).to_contain_text("Server tasks asks: Delete a.txt?")
        question.locator('[data-field="confirm"] input').check()
        question.get_by_role("button", name="Send").click()
        expect(card).to_have_attribute("data-state", "done")
        expect(last_answer(page)).to_have_text("Deleted.")
        expect_run_over(page)
