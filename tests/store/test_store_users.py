"""Users and API keys in the store, on SQLite and PostgreSQL: keys found by prefix and checked by hash,
revoked and removed ones refused, names unique, and chats and the call log filtered by user."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from postgres_schemas import postgres_schema
from toolbridge.store import (
    KeyNotFoundError,
    Store,
    StoreError,
    TokenCount,
    ToolCallLogEntry,
    UserExistsError,
    UserNotFoundError,
)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    with ExitStack() as stack:
        sqlite = f"sqlite:///{tmp_path / 'toolbridge.db'}"
        url = sqlite if request.param == "sqlite" else stack.enter_context(postgres_schema("users_and_keys"))
        yield stack.enter_context(Store(url))


def test_keys_are_found_by_prefix_checked_by_hash_and_revocable(store: Store) -> None:
    assert not store.users.any()
    store.users.add("alice", admin=True)
    assert store.users.any()
    key, record = store.users.create_key("alice", label="ci")
    owner = store.users.owner_of(key)
    assert owner is not None
    assert (owner.name, owner.admin) == ("alice", True)
    assert store.users.keys("alice")[0].last_used_at is not None
    assert store.users.owner_of(key[:-1] + ("A" if key[-1] != "A" else "B")) is None  # same prefix
    assert store.users.owner_of("tbk_00000000_" + "x" * 43) is None
    assert store.users.owner_of("not a key") is None
    store.users.revoke_key(f"tbk_{record.prefix}")  # the key's start works as well as the prefix
    assert store.users.owner_of(key) is None
    with pytest.raises(KeyNotFoundError):
        store.users.revoke_key("ffffffff")


def test_names_are_unique_and_removing_a_user_removes_their_keys(store: Store) -> None:
    store.users.add("bob")
    with pytest.raises(UserExistsError):
        store.users.add("bob", admin=True)
    with pytest.raises(StoreError, match="not a usable user name"):
        store.users.add("bad name")
    key, _ = store.users.create_key("bob")
    store.users.remove("bob")
    assert store.users.owner_of(key) is None
    assert store.users.keys() == []
    with pytest.raises(UserNotFoundError):
        store.users.create_key("bob")


def test_chats_and_calls_are_filtered_by_user(store: Store) -> None:
    store.users.add("alice")
    store.users.add("bob")
    alice, bob = store.users.user_id("alice"), store.users.user_id("bob")
    hers = store.create_chat(agent="default", user_id=alice)
    store.create_chat(agent="default", user_id=bob)
    assert [chat.id for chat in store.list_chats(user_id=alice)] == [hers.id]
    assert store.get_chat(hers.id).user_id == alice
    assert len(store.list_chats()) == 2
    call = ToolCallLogEntry(
        tool="calculate",
        server="native",
        call_id="c1",
        argument_hash="0" * 64,
        started_at=datetime.now(UTC),
        duration=0.1,
        status="ok",
        user_id=alice,
    )
    store.log_tool_call(call)
    assert [s.calls for s in store.tool_stats(user_id=alice)] == [1]
    assert store.tool_stats(user_id=bob) == []
    assert [c.tool for c in store.tool_charts(user_id=alice)] == ["calculate"]


def test_a_removed_users_chats_stay_for_admins(store: Store) -> None:
    store.users.add("carol")
    chat = store.create_chat(agent="default", user_id=store.users.user_id("carol"))
    store.users.remove("carol")
    store.users.add("carol")  # a new carol (maybe a new id, maybe the old one) must not inherit them
    assert store.get_chat(chat.id).user_id is None
    assert store.list_chats(user_id=store.users.user_id("carol")) == []


def test_model_usage_is_summed_per_user_and_since(store: Store) -> None:
    store.users.add("dora")
    store.users.add("eve")
    dora, eve = store.users.user_id("dora"), store.users.user_id("eve")
    for user, tokens_in, tokens_out in [(dora, 10, 2), (dora, 5, 1), (eve, 99, 99)]:
        run = _admit(store, user, limit=None)
        store.users.charge_tokens(run, input_tokens=tokens_in, output_tokens=tokens_out)
        store.users.release_tokens(run)
    store.users.release_tokens(_admit(store, dora, limit=None))  # a run that used nothing leaves no row
    usage = store.users.usage(dora)
    assert (usage.runs, usage.input_tokens, usage.output_tokens) == (2, 15, 3)
    assert store.users.usage(dora, since=datetime.now(UTC) + timedelta(minutes=1)).runs == 0


def test_runs_in_flight_hold_tokens_until_charged_or_ended(store: Store) -> None:
    store.users.add("dora")
    dora = store.users.user_id("dora")
    first = _admit(store, dora, limit=100, tokens=60)
    second = _admit(store, dora, limit=100, tokens=60)  # only 40 were left to hold
    assert _counted(store, dora) == TokenCount(charged=0, held=100)
    assert _admit(store, dora, limit=100, tokens=60) == TokenCount(charged=0, held=100)  # refused

    store.users.charge_tokens(first, input_tokens=20, output_tokens=5)  # replaces 25 of its 60
    assert _counted(store, dora) == TokenCount(charged=25, held=75)
    assert _counted(store, dora, excluding=first) == TokenCount(charged=25, held=40)
    store.users.charge_tokens(first, input_tokens=50, output_tokens=0)  # past its hold: it holds 0
    assert _counted(store, dora) == TokenCount(charged=75, held=40)
    store.users.release_tokens(second)
    assert _counted(store, dora) == TokenCount(charged=75, held=0)
    # A hold not charged since `fresh_after` is a dead run's, and no longer counts.
    store.users.reserve_tokens(dora, limit=100, tokens=10, since=_DAY_START, fresh_after=_DAY_START)
    later = datetime.now(UTC) + timedelta(seconds=1)
    assert store.users.tokens_counted(dora, since=_DAY_START, fresh_after=later).held == 0


def test_runs_admitted_at_once_never_hold_more_than_the_limit(store: Store) -> None:
    store.users.add("dora")
    dora = store.users.user_id("dora")
    with ThreadPoolExecutor(8) as pool:
        admitted = list(pool.map(lambda _: _admit(store, dora, limit=100, tokens=30), range(8)))
    assert sum(isinstance(run, int) for run in admitted) == 4  # 30 + 30 + 30 + the 10 left
    assert _counted(store, dora) == TokenCount(charged=0, held=100)


_DAY_START = datetime.now(UTC) - timedelta(hours=1)


def _admit(store: Store, user_id: int, *, limit: int | None, tokens: int = 0) -> int | TokenCount:
    return store.users.reserve_tokens(
        user_id, limit=limit, tokens=tokens, since=_DAY_START, fresh_after=_DAY_START
    )


def _counted(store: Store, user_id: int, *, excluding: int | None = None) -> TokenCount:
    return store.users.tokens_counted(user_id, since=_DAY_START, fresh_after=_DAY_START, excluding=excluding)
