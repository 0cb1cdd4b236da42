"""A server's request is told which tool call it was made during: over streamable HTTP by the call's
own stream (so concurrent calls on one session each get theirs), over stdio when it is the only call
in flight (and not at all when several are: nothing on the wire says which one asked), and on the
2026-07-28 revision by the call itself, which answers its questions."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as mcp
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.calls_in_flight import CallInFlight, asking_call
from toolbridge.mcp.client_features import ClientFeatures

pytestmark = pytest.mark.anyio

CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="nobody")


class Questions:
    """An elicitation handler that records the call each question was asked during, and holds the
    answers back until `release` is set."""

    def __init__(self) -> None:
        self.calls: list[CallInFlight | None] = []
        self.changed = anyio.Event()
        self.release = anyio.Event()

    async def elicit(self, server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        self.calls.append(asking_call())
        self.changed.set()
        self.changed = anyio.Event()
        await self.release.wait()
        return mcp.ElicitResult(action="decline")

    async def until_asked(self, count: int) -> None:
        while len(self.calls) < count:
            await self.changed.wait()


async def ask_as(server: ServerConnection, caller: str, call_id: str) -> None:
    CALLER.set(caller)  # this task's own context: what the layers above would set (the chat)
    result = await server.call_tool("ask_contact", {}, call_id=call_id)
    assert result.text == "decline"


def callers(questions: Questions) -> list[tuple[str, str] | None]:
    return [None if call is None else (call.call_id, call.context[CALLER]) for call in questions.calls]


async def overlapping_questions(
    config: ServerConfig, second_call_id: str
) -> tuple[list[tuple[str, str] | None], str | None]:
    """A call from "chat 1" (call_1), then one from "chat 2" (`second_call_id`) while the first call's
    question is still open: who asked each question, and the revision the session spoke."""
    questions = Questions()
    async with (
        ServerConnection(config, features=ClientFeatures(elicitation=questions.elicit)) as server,
        anyio.create_task_group() as calls,
    ):
        calls.start_soon(ask_as, server, "chat 1", "call_1")
        await questions.until_asked(1)
        calls.start_soon(ask_as, server, "chat 2", second_call_id)
        await questions.until_asked(2)
        questions.release.set()
        protocol = server.protocol_version
    return callers(questions), protocol


async def test_the_only_call_in_flight_over_stdio_is_the_one_that_asked(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    questions = Questions()
    questions.release.set()
    config = stdio_server("asks_client", name="asker")
    async with ServerConnection(config, features=ClientFeatures(elicitation=questions.elicit)) as server:
        await ask_as(server, "chat 1", "call_7")
    assert callers(questions) == [("call_7", "chat 1")]


async def test_over_stdio_a_question_during_one_of_two_calls_is_asked_by_no_known_call(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    asked_by, _ = await overlapping_questions(stdio_server("asks_client", name="asker"), "call_2")
    assert asked_by == [("call_1", "chat 1"), None]


async def test_over_streamable_http_concurrent_calls_each_get_their_own_question(
    http_server: Callable[..., Any],
) -> None:
    config = http_server("asks_client", "streamable-http").config("asker", protocol="2025-11-25")
    asked_by, _ = await overlapping_questions(config, "call_1")  # the same id: told apart by the call
    assert asked_by == [("call_1", "chat 1"), ("call_1", "chat 2")]


async def test_on_the_2026_revision_concurrent_calls_over_stdio_each_get_their_own_question(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    """There the server returns its questions as the call's result, and the client answers them and
    resends the call: the question is asked by the call itself, whatever the transport."""
    asked_by, protocol = await overlapping_questions(stdio_server("revisions", name="asker"), "call_2")
    assert protocol == "2026-07-28"
    assert asked_by == [("call_1", "chat 1"), ("call_2", "chat 2")]


@pytest.mark.parametrize("resets_on_progress", [False, True], ids=["timeout", "resets-on-progress"])
async def test_the_time_a_person_takes_to_answer_is_not_the_calls(
    stdio_server: Callable[..., ServerConfig], resets_on_progress: bool
) -> None:
    """The call's timeout is half a second; the person answers the server's question after three times
    that. The call still gets its answer: its deadline was held while the question was open."""
    timeout = 0.5

    async def slow_person(server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        await anyio.sleep(timeout * 3)  # a person thinking, not synchronisation: nothing waits on it
        return mcp.ElicitResult(action="decline")

    config = stdio_server(
        "asks_client", name="asker", timeout=timeout, timeout_resets_on_progress=resets_on_progress
    )
    async with ServerConnection(config, features=ClientFeatures(elicitation=slow_person)) as server:
        result = await server.call_tool("ask_contact", {}, call_id="call_1")
    assert not result.is_error, result.text
    assert result.text == "decline"
