"""Progress reports and log messages from servers: handed on per call, resetting timeouts when asked,
and logged under the server's name at the level the config sets."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as mcp
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection, ToolProgress
from toolbridge.mcp.client_features import ClientFeatures

pytestmark = pytest.mark.anyio


async def test_every_call_carries_a_progress_token_and_the_reports_reach_the_caller(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    reports: list[ToolProgress] = []

    async def on_progress(progress: ToolProgress) -> None:
        reports.append(progress)

    async with ServerConnection(stdio_server("reports")) as server:
        result = await server.call_tool(
            "crunch", {"steps": 3, "step_ms": 1}, call_id="c", on_progress=on_progress
        )

    assert result.text == "crunched 3 steps"
    assert [(r.progress, r.total, r.message) for r in reports] == [
        (1, 3, "step 1 of 3"),
        (2, 3, "step 2 of 3"),
        (3, 3, "step 3 of 3"),
    ]
    assert reports[0].describe() == "33% step 1 of 3"


@pytest.mark.parametrize(
    ("report", "shown"),
    [
        (ToolProgress(1, 4, "reading sheet 2"), "25% reading sheet 2"),
        (ToolProgress(2, 4), "50%"),
        (ToolProgress(3, None, "waiting for the printer"), "waiting for the printer"),
        (ToolProgress(1024), "1024"),
    ],
)
def test_a_report_without_a_total_shows_its_message_not_a_bare_count(
    report: ToolProgress, shown: str
) -> None:
    assert report.describe() == shown


@pytest.mark.slow
async def test_progress_resets_the_timeout_only_when_configured(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    # Eight steps of 0.15 s: 1.2 s in all, never 0.6 s without a report.
    work = {"steps": 8, "step_ms": 150}
    async with (
        ServerConnection(stdio_server("reports", name="plain", timeout=0.6)) as plain,
        ServerConnection(
            stdio_server("reports", name="patient", timeout=0.6, timeout_resets_on_progress=True)
        ) as patient,
    ):
        killed = await plain.call_tool("crunch", work, call_id="k")
        finished = await patient.call_tool("crunch", work, call_id="f")
        stalled = await patient.call_tool("crunch", {"steps": 1, "step_ms": 20_000}, call_id="s")

    assert (killed.is_error, killed.error_kind) == (True, "timeout")
    assert (finished.is_error, finished.text) == (False, "crunched 8 steps")
    assert (stalled.is_error, stalled.error_kind) == (True, "timeout")
    assert "did not answer or report progress within 0.6 s" in stalled.text


async def test_log_messages_go_to_the_servers_logger_and_buffer_at_the_configured_level(
    stdio_server: Callable[..., ServerConfig], caplog: pytest.LogCaptureFixture
) -> None:
    arrived = anyio.Event()
    handed_on: list[tuple[str, Any]] = []

    async def on_log(server: str, params: mcp.LoggingMessageNotificationParams) -> None:
        handed_on.append((server, params.data))
        if params.data == "disk full":
            arrived.set()

    config = stdio_server("reports", name="chatty", log_level="warning")
    caplog.set_level(logging.DEBUG, logger="toolbridge.servers")
    async with ServerConnection(config, features=ClientFeatures(on_log=on_log)) as server:
        in_force = await server.call_tool("say", {"level": "info", "text": "quiet"}, call_id="q")
        await server.call_tool("say", {"level": "error", "text": "disk full"}, call_id="l")
        with anyio.fail_after(10):
            await arrived.wait()
        entries = server.log.entries

    assert in_force.text == "warning"  # logging/setLevel was sent at connect
    assert [(e.level, e.logger, e.text) for e in entries] == [
        ("notice", "setup", "log level set to warning"),
        ("error", "reporter", "disk full"),
    ]
    assert handed_on == [("chatty", "log level set to warning"), ("chatty", "disk full")]
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "toolbridge.servers.chatty"]
    assert records == [
        (logging.INFO, "log level set to warning (setup)"),
        (logging.ERROR, "disk full (reporter)"),
    ]


async def test_a_server_flooding_log_messages_is_limited_and_summarised_in_the_log(
    stdio_server: Callable[..., ServerConfig], caplog: pytest.LogCaptureFixture
) -> None:
    handed_on = 0
    all_arrived = anyio.Event()

    async def on_log(server: str, params: mcp.LoggingMessageNotificationParams) -> None:
        nonlocal handed_on
        handed_on += 1
        if handed_on == 101:  # the setLevel notice, then the flood
            all_arrived.set()

    caplog.set_level(logging.DEBUG, logger="toolbridge.servers")
    async with ServerConnection(
        stdio_server("reports", name="flood", log_level="warning"), features=ClientFeatures(on_log=on_log)
    ) as server:
        await server.call_tool("chatter", {"count": 100, "size": 5000}, call_id="c")
        with anyio.fail_after(10):
            await all_arrived.wait()
        entries = server.log.entries

    assert len(entries) == 101, "every message is still kept (up to the last 200) and handed on"
    assert all(len(e.text) < 2100 for e in entries), "a message is cut, not kept whole"
    assert entries[-1].text.endswith("… (3003 more characters left out)")  # "99 " and 5000 x
    records = [r for r in caplog.records if r.name == "toolbridge.servers.flood"]
    assert len(records) == 21, "20 lines, then one line saying how many were left out"
    assert all(len(r.getMessage()) < 2100 for r in records)
    assert records[-1].levelno == logging.WARNING
    assert records[-1].getMessage() == (
        "server 'flood' log messages: suppressed 81 lines (at most 20 are logged per 10 s)"
    )


@pytest.mark.published
async def test_server_everything_reports_progress_on_its_long_running_operation(published_server) -> None:
    reports: list[ToolProgress] = []

    async def on_progress(progress: ToolProgress) -> None:
        reports.append(progress)

    async with ServerConnection(published_server("server-everything", name="everything")) as server:
        result = await server.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.2, "steps": 4},
            call_id="long",
            on_progress=on_progress,
        )

    assert not result.is_error, result.text
    assert [(r.progress, r.total) for r in reports] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert [r.percent for r in reports] == [25, 50, 75, 100]


@pytest.mark.published
async def test_server_everything_log_messages_are_kept_per_connection(published_server) -> None:
    arrived = anyio.Event()

    async def on_log(server: str, params: mcp.LoggingMessageNotificationParams) -> None:
        arrived.set()

    config = published_server("server-everything", name="everything", log_level="debug")
    async with ServerConnection(config, features=ClientFeatures(on_log=on_log)) as server:
        await server.call_tool("toggle-simulated-logging", {}, call_id="t")
        with anyio.fail_after(10):
            await arrived.wait()
        [entry] = server.log.entries[:1]

    assert "-level message" in entry.text or "level-message" in entry.text
    assert entry.level in {"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}


async def test_a_call_timed_out_while_resetting_on_progress_is_still_cancelled_at_the_server(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    config = stdio_server("basic", timeout=0.3, timeout_resets_on_progress=True)
    async with ServerConnection(config) as server:
        result = await server.call_tool("sleep", {"ms": 30_000, "tag": "silent"}, call_id="s")
        cancelled = await server.call_tool("was_cancelled", {"tag": "silent"}, call_id="w", timeout=10)

    assert (result.is_error, result.error_kind) == (True, "timeout")
    assert cancelled.text == "true"
