"""Config rules follow the tool, not the name a collision exposes it under: two real `files` servers
(tests/servers/files.py) share `read_file` and `delete_file`, exposed as `a__...` and `h__...`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from toolbridge.config import CacheConfig, Config
from toolbridge.config.model import ServerConfig
from toolbridge.tools import Toolbox

pytestmark = pytest.mark.anyio

StdioServer = Callable[..., ServerConfig]


def two_file_servers(
    stdio_server: StdioServer, *, h_deny: list[str], cache: CacheConfig | None = None
) -> Config:
    servers = [stdio_server("files", name="a"), stdio_server("files", name="h", tools_deny=h_deny)]
    return Config(servers={server.name: server for server in servers}, cache=cache or CacheConfig())


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["h__delete_file", "h:delete_file", "h:delete_*"])
async def test_a_server_deny_rule_may_name_the_qualified_form(
    stdio_server: StdioServer, tmp_path: Path, rule: str
) -> None:
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me")
    async with Toolbox(two_file_servers(stdio_server, h_deny=[rule])) as box:
        exposed = {spec.name for spec in await box.list_tools()}
        result = await box.call("delete_file", {"path": str(victim)}, source="h")
    assert "h__delete_file" not in exposed
    assert "h__read_file" in exposed
    assert result.error_kind == "unknown_tool"
    assert victim.exists()


@pytest.mark.parametrize("rule", ["read_file", "h:read_file", "h__read_*"])
async def test_a_cache_rule_names_the_tool_in_any_form(
    stdio_server: StdioServer, tmp_path: Path, rule: str
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("first")
    config = two_file_servers(stdio_server, h_deny=[], cache=CacheConfig(tools={rule: 60}))
    async with Toolbox(config) as box:
        assert (await box.call("h__read_file", {"path": str(note)})).text == "first"
        note.write_text("second")
        again = await box.call("h__read_file", {"path": str(note)})
    assert (again.text, again.cached) == ("first", True)
