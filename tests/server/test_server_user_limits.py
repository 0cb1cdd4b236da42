"""Per-user limits through the real API: requests per minute and model tokens per day, each answered
with 429 and `Retry-After` once exceeded, per user (one user's use never limits another), while the
page's reads stay free. Tokens are charged as each model request completes (also a server's sampling
during a run, and a request cut off by a client hanging up), and runs in flight hold tokens back."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from server_helpers import EventReader, RunningServer, serve_in_thread
from users_helpers import add_user, bearer, cli

from toolbridge.config.limits import LimitsConfig
from toolbridge.errors import ToolbridgeError
from toolbridge.models import DemoModel
from toolbridge.server._limits import UsageLimits
from toolbridge.server._metering import metered_sampling
from toolbridge.store import ModelUsage, Store
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

TESTS = Path(__file__).resolve().parents[1]

LIMITS = {"requests_per_minute": 2, "users": {"bob": {"tokens_per_day": 100}}}


def ask(base_url: str, key: str) -> str | None:
    client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0)
    answer = client.chat.completions.create(model="default", messages=[{"role": "user", "content": "Hi"}])
    return answer.choices[0].message.content


def test_requests_per_minute_are_limited_per_user_with_retry_after(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    turns = [Turn.text("one"), Turn.text("two"), Turn.text("carol's")]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, server={"limits": LIMITS}) as server,
    ):
        alice, carol = add_user(db, "alice"), add_user(db, "carol")
        base_url = f"{server.url}/v1"
        assert [ask(base_url, alice), ask(base_url, alice)] == ["one", "two"]
        with pytest.raises(openai.RateLimitError) as refused:
            ask(base_url, alice)
        retry_after = int(refused.value.response.headers["Retry-After"])
        assert 1 <= retry_after <= 60
        assert "2 requests in the last minute" in refused.value.message
        # A chat message starts a run too, and counts; reading stays free.
        http = server.http(headers=bearer(alice))
        chat = http.post("/api/chats", json={}).json()["id"]
        posted = http.post(f"/api/chats/{chat}/messages", json={"content": "Hi"})
        assert posted.status_code == 429
        assert posted.headers["Retry-After"].isdigit()
        assert http.get("/api/chats").status_code == 200
        assert ask(base_url, carol) == "carol's"  # alice's use is hers alone


def test_tokens_per_day_are_limited_per_user_with_retry_after(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    turns = [Turn.text("a long answer").with_usage(prompt_tokens=90, completion_tokens=20)]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, server={"limits": LIMITS}) as server,
    ):
        bob = add_user(db, "bob")
        base_url = f"{server.url}/v1"
        assert ask(base_url, bob) == "a long answer"  # 110 tokens: over bob's 100 from now on
        with pytest.raises(openai.RateLimitError) as refused:
            ask(base_url, bob)
        assert "used 110 model tokens today, the limit is 100" in refused.value.message
        assert 1 <= int(refused.value.response.headers["Retry-After"]) <= 24 * 3600


def test_pass_through_tokens_count_against_the_users_day_too(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    turns = [Turn.text("passed through").with_usage(prompt_tokens=80, completion_tokens=30)]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, server={"limits": LIMITS}) as server,
    ):
        bob = add_user(db, "bob")
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=bob, max_retries=0)
        messages: list[Any] = [{"role": "user", "content": "Hi"}]
        # `scripted` names a configured model, not an agent: the request is passed through.
        answer = client.chat.completions.create(model="scripted", messages=messages)
        assert answer.choices[0].message.content == "passed through"
        with pytest.raises(openai.RateLimitError, match="used 110 model tokens today"):
            client.chat.completions.create(model="scripted", messages=messages)
    assert "bob: 1 runs, 80 model tokens in, 30 out" in cli(db, "stats", "--user", "bob")


def test_a_chat_run_is_charged_to_the_user_who_posted_the_message(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    turns = [Turn.text("a long answer").with_usage(prompt_tokens=90, completion_tokens=20)]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, server={"limits": LIMITS}) as server,
    ):
        http = server.http(headers=bearer(add_user(db, "bob")))
        chat = http.post("/api/chats", json={}).json()["id"]
        with EventReader(http, chat) as events:
            assert http.post(f"/api/chats/{chat}/messages", json={"content": "Hi"}).status_code == 202
            events.until("final")
        refused = http.post(f"/api/chats/{chat}/messages", json={"content": "more"})
        assert refused.status_code == 429
        assert "user 'bob' has used 110 model tokens today" in refused.json()["error"]["message"]
        assert usage_of(server, "bob").runs == 1


def test_a_client_that_hangs_up_mid_run_pays_for_the_model_requests_made(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    turns = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "6 * 7"})).with_usage(60, 10),
        Turn.text("Counting slowly: " + "1 2 3 " * 200, chunk_size=2, delay=0.05),
    ]
    limits = {"tokens_per_day": 10_000}
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, server={"limits": limits}) as server,
    ):
        bob = add_user(db, "bob")
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=bob, max_retries=0)
        stream = client.chat.completions.create(
            model="default", messages=[{"role": "user", "content": "6 * 7, then count"}], stream=True
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                break  # the slow answer is streaming: hang up
        stream.close()
        assert model.wait_for_reply(2).client_disconnected
        # The first request as reported; the one cut off (its usage never came) by its characters.
        used = wait_for_usage(server, "bob", lambda usage: usage.output_tokens > 10)
        assert (used.runs, used.input_tokens > 60) == (1, True)


def test_a_servers_sampling_during_a_run_is_charged_to_the_runs_user_and_capped(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    asked = {"messages": [["user", "Summarize: a long text"]], "max_tokens": 100_000}
    turns = [
        Turn.tool_calls(ToolCallSpec("sample_raw", {"request": json.dumps(asked)})).with_usage(30, 5),
        # The server's 100000 is capped to what bob has left: 500 - 35.
        Turn.text("short.", expect=lambda r: r.body["max_completion_tokens"] == 465).with_usage(100, 5),
        Turn.text("Done.").with_usage(40, 3),
    ]
    asker = {"command": sys.executable, "args": [str(TESTS / "servers" / "asks_client.py")]}
    servers = {"asker": {**asker, "sampling": {"approval": "never"}}}
    limits = {"users": {"bob": {"tokens_per_day": 500}}}
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers=servers, server={"limits": limits}) as server,
    ):
        bob = add_user(db, "bob")
        assert ask(f"{server.url}/v1", bob) == "Done."
        used = usage_of(server, "bob")
    assert (used.runs, used.input_tokens, used.output_tokens) == (1, 170, 13)


def test_runs_in_flight_hold_tokens_so_a_second_run_at_once_is_refused(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    turns = [Turn.text("Counting slowly: " + "1 2 3 " * 200, chunk_size=2, delay=0.05)]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, server={"limits": LIMITS}) as server,
    ):
        bob = add_user(db, "bob")
        client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=bob, max_retries=0)
        stream = client.chat.completions.create(
            model="default", messages=[{"role": "user", "content": "count"}], stream=True
        )
        next(chunk for chunk in stream if chunk.choices and chunk.choices[0].delta.content)
        # Bob's first run is answering, holding his 100 tokens: nothing is left for another one.
        with pytest.raises(openai.RateLimitError) as refused:
            ask(f"{server.url}/v1", bob)
        assert "used 0 model tokens today and holds 100 for runs in progress" in refused.value.message
        stream.close()
        assert model.wait_for_reply(1).client_disconnected


def test_a_run_over_the_limit_makes_no_more_model_requests(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'toolbridge.db'}"
    turns = [Turn.tool_calls(ToolCallSpec("calculate", {"expression": "1 + 1"})).with_usage(90, 20)]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, server={"limits": LIMITS}) as server,
    ):
        bob = add_user(db, "bob")
        with pytest.raises(openai.RateLimitError) as refused:
            ask(f"{server.url}/v1", bob)  # its second step would pass bob's 100 tokens
        assert "user 'bob' has used 110 model tokens today, the limit is 100" in refused.value.message
        assert refused.value.response.headers["Retry-After"].isdigit()
        assert len(model.requests) == 1


def usage_of(server: RunningServer, user: str) -> ModelUsage:
    store: Store = server.app.state.toolbridge.store
    return store.users.usage(store.users.user_id(user))


def wait_for_usage(server: RunningServer, user: str, done: Callable[[ModelUsage], bool]) -> ModelUsage:
    """The user's usage figures once `done` says so (the server charges them as it goes)."""
    deadline = time.monotonic() + 5
    while not done(usage := usage_of(server, user)):
        assert time.monotonic() < deadline, f"{user}'s usage stayed at {usage}"
        time.sleep(0.01)
    return usage


def test_sampling_nobody_can_be_charged_for_is_refused_while_tokens_are_limited(tmp_path: Path) -> None:
    model = DemoModel()
    with Store(f"sqlite:///{tmp_path / 'toolbridge.db'}") as store:
        limited = metered_sampling(UsageLimits(LimitsConfig(users={"bob": {"tokens_per_day": 9}}), store))
        unlimited = metered_sampling(UsageLimits(LimitsConfig(requests_per_minute=5), store))
        # No call to tell whose run asked (outside a call, or one of several on a stdio session).
        with pytest.raises(ToolbridgeError, match="cannot tell whose run this request is for"):
            limited(model, None)
        assert unlimited(model, None) is model
