"""The `server/discover` probe of `protocol: auto`: short for a server that never answers it, patient with a
2026-07-28 server that is only slow (it refuses the `initialize` tried meanwhile, and its late answer to
the probe counts)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection

pytestmark = pytest.mark.anyio

StdioServer = Callable[..., ServerConfig]


def requests_seen(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").split() if log.exists() else []


@pytest.mark.parametrize(
    "refusal",
    [
        {},  # initialize refused with -32022 (the SDK's server, settled on 2026-07-28 by the probe)
        {"REFUSE_INITIALIZE": "1"},  # with a plain error, as a 2026-only HTTP server's bare 400 arrives
        {"REFUSE_INITIALIZE": "garbage"},  # answered with no InitializeResult, as the harness's mocks do
    ],
    ids=["unsupported-version", "plain-error", "not-an-initialize-result"],
)
async def test_a_slow_2026_server_is_spoken_to_in_its_revision(
    stdio_server: StdioServer, tmp_path: Path, refusal: dict[str, str]
) -> None:
    log = tmp_path / "requests.txt"
    # Each answer to server/discover comes a second late: far past the probe's wait.
    env = {"DISCOVER_DELAY": "1", "REQUEST_LOG": str(log), **refusal}
    config = stdio_server("slow_discover", discover_timeout=0.1, env=env)
    async with ServerConnection(config) as server:
        echo = await server.call_tool("echo", {"text": "hi"}, call_id="c")
        assert server.protocol_version == "2026-07-28"
    assert echo.text == "hi"
    # The probe went unanswered in time, `initialize` was tried and refused, the probe's answer counted.
    assert requests_seen(log)[:2] == ["server/discover", "initialize"]


async def test_a_server_that_never_answers_discover_gets_the_handshake_after_one_short_probe(
    stdio_server: StdioServer, tmp_path: Path
) -> None:
    log = tmp_path / "requests.txt"
    # A connect timeout the SDK's own 10 s wait for the probe would use up; the default probe (1 s)
    # leaves time for the rest, also on a loaded machine.
    config = stdio_server("ignores_discover", connect_timeout=5, env={"REQUEST_LOG": str(log)})
    assert config.discover_timeout <= 1.0
    async with ServerConnection(config) as server:
        echo = await server.call_tool("echo", {"text": "hi"}, call_id="c")
        assert server.protocol_version == "2025-11-25"
        assert echo.text == "hi"
        await server.call_tool("crash", {}, call_id="c2")  # the next use reconnects
        await server.call_tool("echo", {"text": "again"}, call_id="c3")
    # Probed once; the reconnect went straight to the handshake.
    assert requests_seen(log).count("server/discover") == 1
    assert requests_seen(log).count("initialize") == 2


async def test_the_same_command_with_other_settings_is_probed_again(
    stdio_server: StdioServer, tmp_path: Path
) -> None:
    # A server remembered as not answering the probe is that command with that environment: started
    # with other settings it may be another server (and tests of one process must not see each other).
    logs = [tmp_path / "first.txt", tmp_path / "second.txt"]
    for log in logs:
        config = stdio_server("ignores_discover", connect_timeout=5, env={"REQUEST_LOG": str(log)})
        async with ServerConnection(config) as server:
            assert (await server.call_tool("echo", {"text": "hi"}, call_id="c")).text == "hi"
    assert [requests_seen(log)[:2] for log in logs] == [["server/discover", "initialize"]] * 2
