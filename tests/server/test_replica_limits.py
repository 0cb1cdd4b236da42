"""Per-user limits across replicas: three `toolbridge serve` processes on one PostgreSQL together allow
a user the configured requests per minute and tokens per day, not that much on each replica."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openai
import pytest
from replicas import Replica, start_replicas
from users_helpers import add_user

from toolbridge.testing import ScriptedModelServer, Turn

pytestmark = pytest.mark.slow

PER_MINUTE = 3
LIMITS = {"users": {"alice": {"requests_per_minute": PER_MINUTE}, "bob": {"tokens_per_day": 100}}}


def ask(replica: Replica, key: str) -> str:
    """`ok`, or `429` when the limit refused the request."""
    client = replica.openai(api_key=key)
    try:
        answer = client.chat.completions.create(model="default", messages=[{"role": "user", "content": "Hi"}])
    except openai.RateLimitError as refused:
        return "429" if refused.response.headers.get("Retry-After", "").isdigit() else "429, no Retry-After"
    return answer.choices[0].message.content or ""


def test_replicas_share_each_users_limits(tmp_path: Path) -> None:
    turns = [Turn.text("ok") for _ in range(PER_MINUTE)]
    turns.append(Turn.text("bob's").with_usage(prompt_tokens=90, completion_tokens=20))
    with (
        ScriptedModelServer(turns) as model,
        start_replicas(tmp_path, model, count=3, server={"limits": LIMITS}) as fleet,
    ):
        alice, bob = add_user(fleet.db_url, "alice"), add_user(fleet.db_url, "bob")
        # Three requests per replica, all at once: the replicas count into one table, under one lock.
        targets = [replica for replica in fleet for _ in range(3)]
        with ThreadPoolExecutor(len(targets)) as pool:
            answers = list(pool.map(lambda replica: ask(replica, alice), targets))
        assert sorted(answers) == ["429"] * (len(targets) - PER_MINUTE) + ["ok"] * PER_MINUTE

        a, b, c = fleet
        assert ask(a, bob) == "bob's"  # 110 tokens, over bob's 100 a day, on every replica
        with pytest.raises(openai.RateLimitError, match="used 110 model tokens today"):
            b.openai(api_key=bob).chat.completions.create(
                model="default", messages=[{"role": "user", "content": "Hi"}]
            )
        assert ask(c, bob) == "429"
