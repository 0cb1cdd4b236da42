"""Arbitrary JSON and strings posted to every endpoint of docs/http-api.md: the answer is never a 5xx.

One real server (uvicorn on 127.0.0.1, the `demo` model) serves every example; bodies are both random
JSON and near-valid shapes (the right keys, random values), so the checks behind the first one run too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fuzz_values import FUZZ, json_values, query_texts, texts
from hypothesis import example, given
from hypothesis import strategies as st
from server_helpers import serve_in_thread
from users_helpers import add_user, bearer


def spellings_of(chat_id: int) -> st.SearchStrategy[str]:
    """Texts FastAPI's int parsing reads as `chat_id`: signs, leading zeros, underscores, a zero
    fraction, and whitespace around it (`+01`, `0_1`, `1.0`, ` 1\n`)."""
    spaces = st.text(st.sampled_from(" \t\n\r\x0b\x0c"), max_size=2)
    return st.builds(
        lambda lead, sign, zeros, fraction, trail: f"{lead}{sign}{zeros}{chat_id}{fraction}{trail}",
        spaces,
        st.sampled_from(["", "+"]),
        st.sampled_from(["", "0", "00", "0_"]),
        st.sampled_from(["", ".0", ".00"]),
        spaces,
    )


ids = st.one_of(texts, st.integers(), st.just(10**23), st.just(-1), spellings_of(1))

wire_messages = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", "developer"]) | json_values},
    optional={"content": json_values, "tool_calls": json_values, "tool_call_id": json_values},
)
completions = st.fixed_dictionaries(
    {"model": st.just("default") | json_values},
    optional={
        "messages": st.lists(wire_messages, max_size=3) | json_values,
        "stream": json_values,
        "stream_options": json_values,
        "temperature": json_values,
        "max_tokens": json_values,
    },
)
bodies = {
    "/v1/chat/completions": completions,
    "/api/chats": st.fixed_dictionaries({}, optional={"agent": json_values, "title": json_values}),
    "/api/chats/{id}/messages": st.fixed_dictionaries({}, optional={"content": json_values}),
    "/api/chats/{id}/approvals/{call}": st.fixed_dictionaries({}, optional={"approved": json_values}),
    "/api/chats/{id}/server-requests/{call}": st.fixed_dictionaries(
        {},
        optional={
            "action": st.sampled_from(["accept", "decline", "cancel"]) | json_values,
            "content": json_values,
        },
    ),
    "/api/chats/{id}/cancel": json_values,
    "/api/servers/{call}/sign-in": json_values,
}
queries = {
    "/v1/models": st.just({}),
    "/api/agents": st.just({}),
    "/api/chats": st.fixed_dictionaries({}, optional={"limit": query_texts}),
    "/api/chats/{id}/messages": st.just({}),
    "/api/tools": st.fixed_dictionaries({}, optional={"agent": query_texts}),
    "/api/servers": st.just({}),
    "/api/stats": st.fixed_dictionaries({}, optional={"since": query_texts}),
    "/api/health": st.just({}),
    "/api/servers/{call}/sign-in": st.just({}),
}


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    directory: Path = tmp_path_factory.mktemp("fuzz")
    with serve_in_thread(directory, None, agents={"default": {"model": "demo"}}) as server:
        client = server.http()
        client.post("/api/chats", json={})  # chat 1 exists, so some ids reach deeper
        yield client


def _path(template: str, chat: Any, call: Any) -> str:
    return template.replace("{id}", _segment(chat)).replace("{call}", _segment(call))


def _segment(value: Any) -> str:
    return quote(str(value).encode("utf-8", "surrogatepass"), safe="")


def _assert_answered(response: httpx.Response) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert response.json()["error"]["message"]


@FUZZ
@given(endpoint=st.sampled_from(sorted(bodies)), body=st.one_of(st.none(), json_values), chat=ids, call=texts)
# Shapes that once answered 500, always tried.
@example(endpoint="/api/chats", body={"title": "\ud800"}, chat=1, call="c")
@example(endpoint="/api/chats/{id}/messages", body={"content": "\udc00"}, chat=1, call="c")
@example(endpoint="/v1/chat/completions", body={"temperature": {"\uddee": 1}}, chat=1, call="c")
@example(
    endpoint="/v1/chat/completions",
    body={
        "model": "default",
        "messages": [{"role": "assistant", "tool_calls": [{"function": "f"}]}, {"role": "user"}],
    },
    chat=1,
    call="c",
)
@example(
    endpoint="/v1/chat/completions",
    body={
        "model": "default",
        "messages": [{"role": "assistant", "tool_calls": [{"id": 7, "function": {"name": "f"}}]}],
    },
    chat=1,
    call="c",
)
def test_random_json_to_every_post_endpoint(
    http: httpx.Client, endpoint: str, body: Any, chat: Any, call: str
) -> None:
    _post_json(http, _path(endpoint, chat, call), body)


@FUZZ
@given(data=st.data(), chat=st.just(1) | ids, call=texts)
def test_near_valid_bodies_to_every_post_endpoint(
    http: httpx.Client, data: st.DataObject, chat: Any, call: str
) -> None:
    endpoint = data.draw(st.sampled_from(sorted(bodies)))
    _post_json(http, _path(endpoint, chat, call), data.draw(bodies[endpoint]))


@FUZZ
@given(
    endpoint=st.sampled_from(sorted(bodies)),
    raw=st.binary(max_size=200) | texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
)
@example(endpoint="/api/chats", raw=b"[" * 100_000)
def test_raw_bytes_to_every_post_endpoint(http: httpx.Client, endpoint: str, raw: bytes) -> None:
    _assert_answered(http.post(_path(endpoint, 1, "call"), content=raw))


@FUZZ
@given(data=st.data(), chat=ids)
def test_random_queries_and_ids_to_every_get_endpoint(
    http: httpx.Client, data: st.DataObject, chat: Any
) -> None:
    endpoint = data.draw(st.sampled_from(sorted(queries)))
    params = data.draw(queries[endpoint])
    # Skip the event stream of a chat that exists: it stays open by design.
    _assert_answered(http.get(_path(endpoint, chat, ""), params=params))


@FUZZ
@given(chat=ids.filter(lambda chat: str(chat) != "1"))
def test_the_event_stream_of_a_bad_chat_id(http: httpx.Client, chat: Any) -> None:
    with http.stream("GET", f"/api/chats/{_segment(chat)}/events") as response:
        if response.status_code == 200:
            return  # a chat that exists: the stream opened, as it should
        response.read()
        _assert_answered(response)


def _post_json(http: httpx.Client, path: str, body: Any) -> None:
    try:
        content = json.dumps(body, allow_nan=True).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):  # pragma: no cover - every drawn value is JSON
        return
    _assert_answered(http.post(path, content=content, headers={"Content-Type": "application/json"}))


ALICES_CHAT = 2
"""Bob's chat is 1: a spelling such as `0_2` must not reach alice's chat, nor any other."""


@pytest.fixture(scope="module")
def alice_and_bob(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    """A server with users: alice's chat is ALICES_CHAT; clients for alice and bob."""
    directory: Path = tmp_path_factory.mktemp("owners")
    with serve_in_thread(directory, None, agents={"default": {"model": "demo"}}) as server:
        alice = server.http(headers=bearer(add_user(server.db_url, "alice")))
        bob = server.http(headers=bearer(add_user(server.db_url, "bob")))
        bob.post("/api/chats", json={})
        assert alice.post("/api/chats", json={}).json()["id"] == ALICES_CHAT
        yield alice, bob


chat_routes = st.sampled_from(
    [
        ("GET", "/api/chats/{id}/messages", None),
        ("POST", "/api/chats/{id}/messages", {"content": "mine now"}),
        ("POST", "/api/chats/{id}/approvals/call_1", {"approved": True}),
        ("POST", "/api/chats/{id}/server-requests/form_1", {"action": "cancel"}),
        ("POST", "/api/chats/{id}/cancel", None),
        ("GET", "/api/chats/{id}/events", None),
    ]
)


@FUZZ
@given(spelling=spellings_of(ALICES_CHAT), route=chat_routes)
@example(spelling="+2", route=("GET", "/api/chats/{id}/messages", None))  # once read alice's messages
def test_no_spelling_of_another_users_chat_id_reaches_it(
    alice_and_bob: tuple[httpx.Client, httpx.Client], spelling: str, route: tuple[str, str, Any]
) -> None:
    alice, bob = alice_and_bob
    method, template, body = route
    with bob.stream(method, _path(template, spelling, ""), json=body) as response:
        response.read()  # an event stream bob may not see is refused before it opens
    assert response.status_code == 404, (spelling, response.text)
    assert f"no chat {ALICES_CHAT};" in response.json()["error"]["message"]
    assert alice.get(f"/api/chats/{ALICES_CHAT}/messages").json() == []
