"""The per-call layer does no needless work: no cache key for a tool that is never cached, no copy of a
call whose arguments needed no fix, no uuid per call."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from toolbridge.config import CacheConfig, Config
from toolbridge.config.model import ServerConfig
from toolbridge.tools import Toolbox, cache
from toolbridge.types import ToolCall

pytestmark = pytest.mark.anyio

StdioServer = Callable[..., ServerConfig]


@pytest.mark.slow
async def test_only_calls_that_may_be_cached_work_out_a_cache_key(
    stdio_server: StdioServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    hashed: list[dict[str, Any]] = []
    real = cache.argument_hash

    def counting(arguments: dict[str, Any]) -> str:
        hashed.append(dict(arguments))
        return real(arguments)

    monkeypatch.setattr(cache, "argument_hash", counting)
    servers = {"shadow": stdio_server("shadow")}
    async with Toolbox(Config(servers=servers), native=False) as uncached:
        await uncached.call("lookup", {"key": "read-only, but no cache configured"})
        await uncached.call("touch", {"key": "never cached"})
    assert hashed == []

    on = Config(servers=servers, cache=CacheConfig(servers={"shadow": 300}))
    async with Toolbox(on, native=False) as cached:
        await cached.call("lookup", {"key": "k"})
        await cached.call("touch", {"key": "t"})
    assert hashed == [{"key": "k"}, {"key": "k"}]  # looked up, then kept


async def test_a_call_whose_arguments_need_no_fix_is_passed_on_as_it_is(
    stdio_server: StdioServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    copies: list[dict[str, Any]] = []
    real = ToolCall.model_copy

    def counting(self: ToolCall, *, update: dict[str, Any] | None = None, deep: bool = False) -> ToolCall:
        copies.append(update or {})
        return real(self, update=update, deep=deep)

    monkeypatch.setattr(ToolCall, "model_copy", counting)
    async with Toolbox(Config(servers={"basic": stdio_server("basic")}), native=False) as box:
        await box.list_tools()
        exact = await box.call("echo", {"text": "as it is"})
        assert copies == []
        fixed = await box.call("echo", {"text": 5})
    assert (exact.text, fixed.text.splitlines()[-1]) == ("as it is", "5")
    assert copies == [{"arguments": {"text": "5"}}]


def test_call_ids_are_unique_without_a_uuid_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_uuid() -> uuid.UUID:
        raise AssertionError("a uuid was made for a call id")

    monkeypatch.setattr(uuid, "uuid4", no_uuid)
    ids = {ToolCall(name="t").id for _ in range(1000)}
    assert len(ids) == 1000
    assert all(call_id.startswith("call_") for call_id in ids)
