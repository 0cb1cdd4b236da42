"""A server's question on `toolbridge serve` goes to the chat whose call it was asked during, even when
other calls to the same server run at the same moment: two chats each get their own, and a call made
through the OpenAI endpoint is declined while a chat's call is asked.

The asking server runs over streamable HTTP, where its questions arrive on the stream of the call they
belong to (over stdio nothing on the wire says which of two concurrent calls asked)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from server_helpers import EventReader, RunningServer, serve_in_thread

from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

pytestmark = pytest.mark.slow

QUESTION = [{"role": "user", "content": "Who?"}]
# The same call id in both chats: the question is told apart by the call, not by its id.
ASK = ToolCallSpec("ask_contact", {}, id="call_1")


def tool_result_has(text: str) -> Callable[[RecordedRequest], bool]:
    def check(request: RecordedRequest) -> bool:
        return request.last_message["role"] == "tool" and text in request.last_message["content"]

    return check


@pytest.fixture
def asker_over_http(http_server: Callable[..., Any]) -> dict[str, Any]:
    server = http_server("asks_client", "streamable-http")
    # Its tools ask mid-call, which the 2026-07-28 revision does not allow.
    return {"asker": {"type": "streamable-http", "url": server.url, "protocol": "2025-11-25"}}


class Chat:
    """One chat of the running server, its event stream open."""

    def __init__(self, server: RunningServer) -> None:
        self.http = server.http()
        self.id = self.http.post("/api/chats", json={}).json()["id"]
        self.events = EventReader(self.http, self.id)

    def ask(self, text: str) -> None:
        assert self.http.post(f"/api/chats/{self.id}/messages", json={"content": text}).status_code == 202

    def question(self) -> dict[str, Any]:
        return self.events.until("server_request")[-1]

    def answer(self, question: dict[str, Any], name: str) -> None:
        url = f"/api/chats/{self.id}/server-requests/{question['request_id']}"
        answer = {"action": "accept", "content": {"name": name, "age": 30}}
        assert self.http.post(url, json=answer).status_code == 204

    def final(self) -> str:
        return str(self.events.until("final")[-1]["result"]["output"])


@pytest.fixture
def chats() -> Iterator[list[Chat]]:
    opened: list[Chat] = []
    yield opened
    for chat in opened:
        chat.events.close()


def test_two_chats_calling_the_same_server_at_once_each_get_their_own_question(
    tmp_path: Path, asker_over_http: dict[str, Any], chats: list[Chat]
) -> None:
    turns = [
        Turn.tool_calls(ASK),
        Turn.tool_calls(ASK),
        Turn.text("Bea it is.", expect=tool_result_has("accepted Bea")),
        Turn.text("Ann it is.", expect=tool_result_has("accepted Ann")),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers=asker_over_http) as server,
    ):
        first, second = Chat(server), Chat(server)
        chats += [first, second]
        first.ask("Who first?")
        first_question = first.question()
        # The first call is still waiting on its question while the second one asks.
        second.ask("Who second?")
        second_question = second.question()
        assert first_question["call_id"] == second_question["call_id"] == "call_1"
        assert first_question["message"] == second_question["message"] == "Who should we contact?"
        second.answer(second_question, "Bea")
        assert second.final() == "Bea it is."
        first.answer(first_question, "Ann")
        assert first.final() == "Ann it is."


def test_a_call_through_the_openai_endpoint_is_declined_while_a_chats_call_is_asked(
    tmp_path: Path, asker_over_http: dict[str, Any], chats: list[Chat]
) -> None:
    declined = (
        "Elicitation declined: toolbridge serve has nobody to ask (the call came through the OpenAI endpoint"
    )
    turns = [
        Turn.tool_calls(ASK),
        Turn.tool_calls(ASK),
        Turn.text("Nobody answered.", expect=tool_result_has(declined)),
        Turn.text("Ann it is.", expect=tool_result_has("accepted Ann")),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers=asker_over_http) as server,
    ):
        chat = Chat(server)
        chats.append(chat)
        chat.ask("Who?")
        question = chat.question()
        completion = server.openai().chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]
        assert completion.choices[0].message.content == "Nobody answered."
        chat.answer(question, "Ann")
        assert chat.final() == "Ann it is."
