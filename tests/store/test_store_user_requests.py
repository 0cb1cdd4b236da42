"""Requests counted for per-user limits (`Store.users.count_request`): refused over the limit with the
oldest request's time, per user, and rows past the window pruned as requests come."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import func, select

from toolbridge.store import Store
from toolbridge.store._schema import UserRequestRow

HOUR = timedelta(hours=1)


def test_requests_are_counted_per_user_up_to_the_limit_and_old_ones_pruned(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'toolbridge.db'}") as store:
        store.users.add("alice")
        before = datetime.now(UTC)
        assert store.users.count_request("alice", limit=2, window=HOUR) is None
        assert store.users.count_request("alice", limit=2, window=HOUR) is None
        oldest = store.users.count_request("alice", limit=2, window=HOUR)
        assert oldest is not None
        assert before <= oldest <= datetime.now(UTC)
        assert store.users.count_request("bob", limit=2, window=HOUR) is None  # alice's are hers

        # A window that has passed for every row: they are deleted, and the request is counted.
        assert store.users.count_request("alice", limit=2, window=timedelta(0)) is None
        with store.reading() as session:
            rows = session.scalar(
                select(func.count()).select_from(UserRequestRow).where(UserRequestRow.user_name == "alice")
            )
        assert rows == 1
