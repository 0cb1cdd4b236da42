"""What the 2026-07-28 revision does differently, done the same for the user: resource subscriptions
ride on `subscriptions/listen` streams, a server that never answers `server/discover` costs one short
probe per process, log levels ride on each request, and a server gone away is noticed by its stream."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection, ServerPool

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

StdioServer = Callable[..., ServerConfig]


async def test_resource_subscriptions_work_on_the_stateless_revision_and_are_renewed_after_a_restart(
    stdio_server: StdioServer,
) -> None:
    updates: list[tuple[str, str]] = []
    arrived = [anyio.Event() for _ in range(3)]

    async def on_update(server: str, uri: str) -> None:
        updates.append((server, uri))
        arrived[len(updates) - 1].set()

    async with ServerConnection(stdio_server("library")) as library:
        await library.content.subscribe("note://readme", on_update)
        assert library.protocol_version == "2026-07-28"
        first = await library.call_tool("touch", {"uri": "note://readme"}, call_id="t1")
        with anyio.fail_after(10):
            await arrived[0].wait()
        await library.call_tool("crash", {}, call_id="c")
        # A new server process: the update comes only if the stream was opened again.
        await library.call_tool("touch", {"uri": "note://readme"}, call_id="t2")
        with anyio.fail_after(10):
            await arrived[1].wait()
        await library.content.unsubscribe("note://readme")
        await library.content.subscribe("note://other", on_update)
        await library.call_tool("touch", {"uri": "note://readme"}, call_id="t3")
        await library.call_tool("touch", {"uri": "note://other"}, call_id="t4")
        with anyio.fail_after(10):
            await arrived[2].wait()

    # No resources/subscribe on this revision: the server knew of no subscriber of its own.
    assert first.text == "told the listen streams about note://readme"
    assert updates == [("library", "note://readme")] * 2 + [("library", "note://other")]


async def test_a_server_that_never_answers_discover_is_probed_once_per_process(
    stdio_server: StdioServer, tmp_path: Path
) -> None:
    log = tmp_path / "requests.txt"
    # Within the connect timeout only because the probe gives up after 0.5 s rather than the SDK's 10.
    config = stdio_server(
        "ignores_discover", env={"REQUEST_LOG": str(log)}, discover_timeout=0.5, connect_timeout=5
    )

    async with ServerConnection(config) as server:
        echo = await server.call_tool("echo", {"text": "hi"}, call_id="a")
        assert server.protocol_version == "2025-11-25"
        await server.call_tool("crash", {}, call_id="x")
        # The next use starts a new server process, which must not be probed again.
        again = await server.call_tool("echo", {"text": "again"}, call_id="b")
    async with ServerPool({"slow": config}) as pool:
        later = await pool.call_tool("slow", "echo", {"text": "later"}, call_id="c")
    requests = log.read_text().split()

    assert (echo.text, again.text, later.text) == ("hi", "again", "later")
    assert requests[:2] == ["server/discover", "initialize"]
    # Three processes, each opened with `initialize`; only the first was asked `server/discover`.
    assert requests.count("initialize") == 3
    assert requests.count("server/discover") == 1


async def test_log_levels_ride_on_each_request_on_the_stateless_revision(stdio_server: StdioServer) -> None:
    both = ["--both-revisions"]
    quiet = stdio_server("reports", name="quiet", log_level="warning")
    quiet = quiet.model_copy(update={"args": [*quiet.args, *both]})
    unset = quiet.model_copy(update={"name": "unset", "log_level": None})

    async with ServerConnection(quiet) as server:
        await server.call_tool("say", {"level": "info", "text": "not wanted"}, call_id="a")
        await server.call_tool("say", {"level": "error", "text": "disk full"}, call_id="b")
        assert server.protocol_version == "2026-07-28"
        at_warning = [(e.level, e.text) for e in server.log.entries]
    async with ServerConnection(unset) as server:
        await server.call_tool("say", {"level": "debug", "text": "chatter"}, call_id="c")
        await server.call_tool("say", {"level": "info", "text": "a note"}, call_id="d")
        unconfigured = [(e.level, e.text) for e in server.log.entries]

    # A server logs only while answering, and only at the level the request asks for (its result comes
    # after its log messages, so nothing needs waiting for).
    assert at_warning == [("error", "disk full")]
    assert ("info", "a note") in unconfigured  # without a configured level: info and up
    assert ("debug", "chatter") not in unconfigured


async def test_an_idle_stateless_http_server_that_went_away_is_noticed_and_reconnected(http_server) -> None:
    first = http_server("basic", "streamable-http")
    async with ServerConnection(first.config("remote")) as server:
        before = await server.call_tool("pid", {}, call_id="p1")
        assert server.protocol_version == "2026-07-28"
        first.stop()
        with anyio.fail_after(10):
            await server.wait_session_ended()  # nothing was called: only the listen stream can tell
        state, why = server.state, server.last_error
        http_server("basic", "streamable-http", port=first.port)
        after = await server.call_tool("pid", {}, call_id="p2")

    assert state == "disconnected"
    assert why is not None
    assert "went away" in why
    assert not after.is_error, after.text
    assert after.text != before.text
