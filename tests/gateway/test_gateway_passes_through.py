"""What the gateway passes through between its clients and the servers behind it: progress, cancellation
and log messages, with the SDK client's default revision (2026-07-28) and its 2025-11-25 mode."""

from __future__ import annotations

from pathlib import Path

import anyio
import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client

from toolbridge.store import Store

# Logging is deprecated on 2026-07-28; its 2025-11-25 form is what these tests check.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:The logging capability is deprecated"),
]

MODES = ["auto", "legacy"]


@pytest.mark.parametrize("mode", MODES)
async def test_progress_reaches_the_client_and_cancelling_the_call_cancels_it_upstream(
    tmp_path: Path, mode: str
) -> None:
    reports: list[tuple[float, float | None, str | None]] = []
    async with Client(gateway(tmp_path, {"chores": our_server("chores")}), mode=mode) as client:
        with anyio.fail_after(60), anyio.CancelScope() as call_scope:

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                reports.append((progress, total, message))
                call_scope.cancel()  # the job is running upstream: stop it

            await client.call_tool("long_job", {"tag": "stopped"}, progress_callback=on_progress)
        assert call_scope.cancelled_caught
        assert reports == [(1, 3, "started")]
        # The upstream server saw its call cancelled, and the gateway still serves this client.
        cancelled = await client.call_tool("was_cancelled", {"tag": "stopped", "wait_ms": 20_000})
        assert cancelled.structured_content == {"result": True}

    with Store(f"sqlite:///{tmp_path / 'calls.db'}") as store:
        stats = {row.tool: row for row in store.tool_stats()}
    assert stats["long_job"].cancelled == 1


async def test_every_progress_report_arrives_in_order(tmp_path: Path) -> None:
    reports: list[str | None] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(message)

    async with Client(gateway(tmp_path, {"reports": our_server("reports")})) as client:
        result = await client.call_tool("crunch", {"steps": 3, "step_ms": 1}, progress_callback=on_progress)
    assert not result.is_error
    assert reports == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]


async def test_log_messages_of_a_call_reach_its_client_at_the_level_set_with_set_level(
    tmp_path: Path,
) -> None:
    heard: list[mcp.LoggingMessageNotificationParams] = []

    async def on_log(params: mcp.LoggingMessageNotificationParams) -> None:
        heard.append(params)

    started = gateway(tmp_path, {"chores": our_server("chores")})
    async with Client(started, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("info")
        assert not (await client.call_tool("chatter", {"text": "hello"})).is_error
    assert [(entry.level, entry.data, entry.logger) for entry in heard] == [
        ("info", "info: hello", "chores.chores"),
        ("error", "error: hello", "chores.chores"),
    ]


async def test_log_messages_of_a_call_reach_its_client_at_the_level_its_request_names(tmp_path: Path) -> None:
    heard: list[mcp.LoggingMessageNotificationParams] = []

    async def on_log(params: mcp.LoggingMessageNotificationParams) -> None:
        heard.append(params)

    started = gateway(tmp_path, {"chores": our_server("chores")})
    async with Client(started, logging_callback=on_log, log_level="error") as client:
        assert not (await client.call_tool("chatter", {"text": "hello"})).is_error
    assert [(entry.level, entry.data) for entry in heard] == [("error", "error: hello")]


async def test_log_messages_outside_calls_reach_every_client_that_asked_for_them(tmp_path: Path) -> None:
    """The reports server logs as its level is set, when the gateway connects it: no call is running."""
    heard: list[mcp.LoggingMessageNotificationParams] = []
    arrived = anyio.Event()

    async def on_log(params: mcp.LoggingMessageNotificationParams) -> None:
        heard.append(params)
        arrived.set()

    upstream = {"reports": our_server("reports", protocol="2025-11-25", log_level="debug")}
    async with Client(gateway(tmp_path, upstream), mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("debug")
        await client.list_tools()  # connects the upstream server
        with anyio.fail_after(20):
            await arrived.wait()
    assert (heard[0].level, heard[0].data, heard[0].logger) == (
        "notice",
        "log level set to debug",
        "reports.setup",
    )
