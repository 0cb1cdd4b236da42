"""ServerConnection over real stdio pipes to tests/servers/basic.py: conversion, kept session, timeouts,
list_changed, and what happens to a call when the server process dies under it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from toolbridge.mcp import ServerConnection
from toolbridge.types import AudioPart, ImagePart, ResourcePart, TextPart

pytestmark = pytest.mark.anyio


async def test_tools_are_listed_as_neutral_specs_with_their_annotations(basic: ServerConnection) -> None:
    tools = {tool.name: tool for tool in await basic.list_tools()}

    assert {"echo", "add", "sleep", "media", "weather", "crash", "flaky_read"} <= set(tools)
    echo = tools["echo"]
    assert echo.source == "basic"
    assert echo.description == "Return the text unchanged."
    assert echo.input_schema["properties"]["text"]["type"] == "string"
    assert echo.annotations.read_only_hint is True
    assert echo.annotations.safe_to_retry
    assert tools["flaky_idempotent"].annotations.idempotent_hint is True
    assert not tools["flaky_write"].annotations.safe_to_retry
    weather_schema = tools["weather"].output_schema
    assert weather_schema is not None
    assert set(weather_schema["properties"]) == {"city", "celsius"}


async def test_connects_on_first_use_and_keeps_one_session_for_every_call(stdio_server) -> None:
    async with ServerConnection(stdio_server("basic")) as server:
        assert server.state == "disconnected"
        first = await server.call_tool("pid", {}, call_id="c1")
        assert server.state == "connected"
        pids = {first.text} | {(await server.call_tool("pid", {}, call_id=f"c{i}")).text for i in range(5)}
        assert server.state == "connected"
    assert server.state == "closed"
    assert len(pids) == 1, "every call must go through the same server process"


async def test_a_call_returns_text_with_call_id_server_and_duration(basic: ServerConnection) -> None:
    result = await basic.call_tool("echo", {"text": "héllo"}, call_id="call_7")
    assert result.call_id == "call_7"
    assert result.content == [TextPart(text="héllo")]
    assert not result.is_error
    assert result.server == "basic"
    assert result.duration > 0


async def test_every_content_type_and_structured_content_are_converted(basic: ServerConnection) -> None:
    result = await basic.call_tool("media", {}, call_id="m")
    weather = await basic.call_tool("weather", {"city": "Oslo"}, call_id="w")

    text, image, audio, embedded_text, embedded_blob, link = result.content
    assert text == TextPart(text="all kinds")
    assert isinstance(image, ImagePart)
    assert image.mime_type == "image/png"
    assert image.data.startswith("iVBOR")
    assert isinstance(audio, AudioPart)
    assert audio.mime_type == "audio/wav"
    assert embedded_text == ResourcePart(uri="file:///notes.txt", mime_type="text/plain", text="notes")
    assert embedded_blob == ResourcePart(
        uri="file:///data.bin", mime_type="application/octet-stream", blob="AAEC"
    )
    assert link == ResourcePart(uri="file:///README.md", mime_type="text/markdown")
    assert result.structured_content == {"kinds": 6}
    assert weather.structured_content == {"city": "Oslo", "celsius": 21.5}


async def test_a_tool_error_is_a_normal_result_marked_as_error(basic: ServerConnection) -> None:
    result = await basic.call_tool("fail", {"message": "the disk is full"}, call_id="f")
    after = await basic.call_tool("echo", {"text": "still here"}, call_id="e")
    assert (result.is_error, result.error_kind) == (True, "server_error")
    assert "the disk is full" in result.text
    assert after.text == "still here"


async def test_a_call_to_a_tool_the_server_does_not_have_is_an_error_result(basic: ServerConnection) -> None:
    result = await basic.call_tool("no_such_tool", {}, call_id="x")
    assert result.is_error
    assert "no_such_tool" in result.text


async def test_a_call_past_its_timeout_is_cancelled_at_the_server_and_returns_an_error(
    basic: ServerConnection,
) -> None:
    result = await basic.call_tool("sleep", {"ms": 30_000, "tag": "t1"}, call_id="s", timeout=0.3)
    cancelled = await basic.call_tool("was_cancelled", {"tag": "t1"}, call_id="w")
    after = await basic.call_tool("echo", {"text": "ok"}, call_id="e")

    assert (result.is_error, result.error_kind) == (True, "timeout")
    assert "did not answer within 0.3 s" in result.text
    assert "cancelled at the server" in result.text
    assert cancelled.text == "true", "the server must have received notifications/cancelled"
    assert after.text == "ok", "the session survives a timed-out call"


async def test_the_servers_default_timeout_applies_and_a_call_can_override_it(stdio_server) -> None:
    async with ServerConnection(stdio_server("basic", timeout=0.2)) as server:
        by_default = await server.call_tool("sleep", {"ms": 2000}, call_id="a")
        overridden = await server.call_tool("sleep", {"ms": 400}, call_id="b", timeout=10)
    assert by_default.is_error
    assert "0.2 s" in by_default.text
    assert not overridden.is_error
    assert overridden.text == "slept 400 ms"


async def test_the_tool_list_is_cached_and_refreshed_after_list_changed(stdio_server) -> None:
    """On 2025-11-25 a listing is kept until the server says it changed (2026-07-28 listings last as long
    as their cache hint: tests/mcp/test_modern_resources_and_prompts.py)."""
    changed = anyio.Event()
    config = stdio_server("basic").model_copy(update={"protocol": "2025-11-25"})
    async with ServerConnection(config, on_tools_changed=lambda name: changed.set()) as server:
        before = await server.list_tools()
        assert await server.list_tools() is before, "a second listing comes from the cache"

        await server.call_tool("add_tool", {"name": "late_tool"}, call_id="a")
        with anyio.fail_after(5):
            await changed.wait()
        after = await server.list_tools()

    assert "late_tool" not in {tool.name for tool in before}
    assert "late_tool" in {tool.name for tool in after}


async def test_refresh_lists_again_even_without_a_notification(basic: ServerConnection) -> None:
    cached = await basic.list_tools()
    refreshed = await basic.list_tools(refresh=True)
    assert refreshed is not cached
    assert refreshed == cached


@pytest.mark.slow
async def test_a_server_exiting_during_a_call_gives_an_error_result_and_the_next_call_reconnects(
    stdio_server,
) -> None:
    async with ServerConnection(stdio_server("basic")) as server:
        old_pid = (await server.call_tool("pid", {}, call_id="p1")).text
        result = await server.call_tool("crash", {"code": 7}, call_id="c")
        new_pid = (await server.call_tool("pid", {}, call_id="p2")).text

    assert (result.is_error, result.error_kind) == (True, "server_unavailable")
    assert "connection to server 'basic' was lost during the call to 'crash'" in result.text
    assert "exited with code 7" in result.text
    assert "crashing on purpose" in result.text, "the server's last stderr lines are quoted"
    assert "may or may not have run" in result.text
    assert new_pid != old_pid


@pytest.mark.slow
async def test_a_lost_call_is_resent_once_only_if_the_tool_is_read_only_or_idempotent(
    stdio_server, tmp_path: Path
) -> None:
    # One connection for the three cases: each first call kills the server, which costs a restart.
    markers = {tool: tmp_path / tool for tool in ("flaky_read", "flaky_idempotent", "flaky_write")}
    async with ServerConnection(stdio_server("basic")) as server:
        results = {
            tool: await server.call_tool(tool, {"marker": str(marker)}, call_id=tool)
            for tool, marker in markers.items()
        }
        assert server.state == "connected", "the server was restarted right away"
        after = await server.call_tool("echo", {"text": "back"}, call_id="e")

    for tool in ("flaky_read", "flaky_idempotent"):
        assert not results[tool].is_error, results[tool].text
        assert results[tool].text.endswith("run 2")
        assert any("resent once" in note for note in results[tool].notes)
        assert markers[tool].read_text().count("run") == 2

    unsafe = results["flaky_write"]
    assert unsafe.is_error
    assert "The server was restarted, but the call may or may not have run" in unsafe.text
    assert markers["flaky_write"].read_text().count("run") == 1, "the call must not have been sent again"
    assert after.text == "back"


@pytest.mark.slow
async def test_a_server_that_died_between_calls_is_noticed_and_reconnected_on_next_use(
    stdio_server, wait_until_gone
) -> None:
    async with ServerConnection(stdio_server("basic")) as server:
        pid = int((await server.call_tool("pid", {}, call_id="p1")).text)

        # Kill it from outside while idle: the session notices without a call failing.
        os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(10):
            await server.wait_session_ended()
        assert server.state == "disconnected"
        assert "killed by SIGKILL" in server.last_error
        result = await server.call_tool("echo", {"text": "again"}, call_id="e")
        assert wait_until_gone(pid)
    assert result.text == "again"
    assert not result.notes, "nothing was lost: the call went to a fresh session"


async def test_a_healthy_servers_stderr_is_kept_for_inspection(basic: ServerConnection) -> None:
    await basic.call_tool("write_stderr", {"text": "warming up the cache"}, call_id="s")
    assert "warming up the cache" in basic.stderr_tail()
    assert basic.last_error is None
