"""Config files that are broken: each error names the file, the place and what to do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loader_helpers import write

from toolbridge.config import load_config, parse_config
from toolbridge.errors import ConfigError

pytestmark = pytest.mark.usefixtures("isolated")  # no config of the real machine leaks in


def test_invalid_json_names_file_line_and_column(isolated: Path) -> None:
    path = write(isolated / "bad.json", '{\n  "mcpServers": {\n    "s": {"command": "x" "args": []}\n  }\n}')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: invalid JSON at line 3, column 26")
    assert "delimiter" in message


@pytest.mark.parametrize("levels", [101, 900, 100_000])
def test_a_config_nested_too_deep_is_an_error_naming_where(isolated: Path, levels: int) -> None:
    # 900 levels decode, then recursed through when expanding ${VAR}; 100,000 do not even decode.
    # The 101st level is the 98th bracket, from column 45.
    nested = "[" * levels + "]" * levels
    path = write(isolated / "deep.json", '{\n  "models": {"m": {"provider": "demo", "x": ' + nested + "}}}")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}: nested too deep at line 2, column 142; a config file nests objects and lists at most"
        " 100 levels deep; check that this is the config file you meant (a generated or damaged file?)"
    )


def test_a_document_nested_too_deep_is_an_error_when_parsed_directly() -> None:
    nested: list[Any] = []
    for _ in range(2000):
        nested = [nested]
    with pytest.raises(ConfigError, match=r"^nested too deep; a config file nests .* at most 100 levels"):
        parse_config({"models": {"m": {"provider": "demo", "x": nested}}})


def test_a_config_nested_as_deep_as_allowed_is_read() -> None:
    nested: list[Any] = []
    for _ in range(96):  # with the document, models, m and x: 100 levels
        nested = [nested]
    with pytest.raises(ConfigError, match=r"models\.m\.x: unknown key"):
        parse_config({"models": {"m": {"provider": "demo", "x": nested}}})


def test_a_file_that_is_not_utf8_is_an_error(isolated: Path) -> None:
    path = isolated / "latin1.json"
    path.write_bytes(b'{"x": "\xff"}')
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(path)


@pytest.mark.parametrize(
    ("document", "server", "key", "fragments"),
    [
        ([], None, None, ["expected a JSON object at the top level, got a list"]),
        ({"mcpServers": []}, None, "mcpServers", ["expected an object mapping server names", "got a list"]),
        ({"mcpServers": {"s": "npx x"}}, "s", None, ["expected an object with the server's settings"]),
        (
            {"mcpServers": {"s": {"command": "x", "args": "-y pkg"}}},
            "s",
            "args",
            ["expected a list of strings, got a string", '["-y pkg"]'],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "args": ["--port", 8080]}}},
            "s",
            "args[1]",
            ["expected a string, got a number (8080)", 'write it in quotes: "8080"'],
        ),
        ({"mcpServers": {"s": {"command": 5}}}, "s", "command", ["expected a string, got a number"]),
        ({"mcpServers": {"s": {"command": " "}}}, "s", "command", ["expected a non-empty string"]),
        (
            {"mcpServers": {"s": {"command": "x", "env": ["A=1"]}}},
            "s",
            "env",
            ["expected an object of names to strings", "got a list"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "env": {"PORT": 80}}}},
            "s",
            "env.PORT",
            ["expected a string, got a number (80)"],
        ),
        (
            {"mcpServers": {"s": {"url": "http://h/", "headers": {"X": None}}}},
            "s",
            "headers.X",
            ["expected a string, got null"],
        ),
        ({"mcpServers": {"s": {"url": "ftp://h/"}}}, "s", "url", ["expected an http:// or https:// URL"]),
        (
            {"mcpServers": {"s": {"command": "x", "enabled": "yes"}}},
            "s",
            "enabled",
            ["expected true or false, got a string"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "timeout": 0}}},
            "s",
            "timeout",
            ["expected a positive number of seconds, got a number (0)"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "timeout": "soon"}}},
            "s",
            "timeout",
            ["expected a positive number of seconds, got a string"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "timeout": True}}},
            "s",
            "timeout",
            ["expected a positive number of seconds, got a boolean"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "connect_timeout": 1, "connectTimeout": 2}}},
            "s",
            "connectTimeout",
            ["not both"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "tools": ["a"]}}},
            "s",
            "tools",
            ['expected an object like {"allow": [...], "deny": [...]}'],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "tools": {"alow": ["a"]}}}},
            "s",
            "tools.alow",
            ["unknown key; did you mean 'allow'?"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "tools": {"deny": "a"}}}},
            "s",
            "tools.deny",
            ["expected a list of strings, got a string"],
        ),
        (
            {"mcpServers": {"s": {"comand": "x"}}},
            "s",
            "comand",
            ["unknown key; did you mean 'command'?"],
        ),
        ({"mcpServers": {"s": {"command": "x", "headrs": {}}}}, "s", "headrs", ["did you mean 'headers'?"]),
        (
            {"mcpServers": {"s": {"command": "x", "zzzz": 1}}},
            "s",
            "zzzz",
            ["unknown key; valid keys: type,"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "envFile": ".env"}}},
            "s",
            "envFile",
            ["put the variables in 'env'"],
        ),
        (
            {"mcpServers": {"s": {"command": "x", "url": "http://h/"}}},
            "s",
            None,
            ["both 'command' and 'url' given", "not both"],
        ),
        (
            {"mcpServers": {"s": {"args": ["x"]}}},
            "s",
            None,
            ["expected 'command'", "or 'url'", "neither was given"],
        ),
        (
            {"mcpServers": {"s": {"type": "websocket", "url": "ws://h"}}},
            "s",
            "type",
            ["unknown transport 'websocket'", "'stdio', 'sse', 'streamable-http'"],
        ),
        ({"mcpServers": {"s": {"transport": 3, "command": "x"}}}, "s", "transport", ["unknown transport 3"]),
        (
            {"mcpServers": {"s": {"type": "sse", "transport": "stdio", "command": "x"}}},
            "s",
            "transport",
            ["'type' says 'sse' but 'transport' says 'stdio'"],
        ),
        (
            {"mcpServers": {"s": {"type": "stdio", "url": "http://h/"}}},
            "s",
            "type",
            ["a stdio server needs 'command'"],
        ),
        ({"mcpServers": {"s": {"type": "sse", "command": "x"}}}, "s", "type", ["a sse server needs 'url'"]),
        (
            {"mcpServers": {"a__b": {"command": "x"}}},
            "a__b",
            None,
            ["must not contain '__'", "rename the server"],
        ),
        ({"mcpServers": {"": {"command": "x"}}}, "", None, ["server names must not be empty"]),
        (
            {"mcpServers": {"s": {"command": "x"}}, "servers": {"s": {"command": "y"}}},
            "s",
            None,
            ["server defined twice"],
        ),
        (
            {"mcpServers": {"s": {"command": "${not valid}"}}},
            "s",
            "command",
            ["not a valid variable reference"],
        ),
        (
            {"mcpServer": {"s": {"command": "x"}}},
            None,
            "mcpServer",
            ["unknown key; did you mean 'mcpServers'?"],
        ),
        ({"colour": "red"}, None, "colour", ["unknown key; valid keys: mcpServers, servers, inputs, models"]),
        (  # issue 9 item 10: a misspelt section must not silently drop an approval policy
            {"agnets": {"a": {"approval": {"default": "always"}}}},
            None,
            "agnets",
            ["unknown key; did you mean 'agents'?"],
        ),
        (
            {"agents": {"excel-helper": {"max_step": 3}}},
            None,
            "agents.excel-helper.max_step",
            ["unknown key; did you mean 'max_steps'?"],
        ),
        (
            {"agents": {"a": {"approval": {"tool": {"x": "always"}}}}},
            None,
            "agents.a.approval.tool",
            ["unknown key; did you mean 'tools'?"],
        ),
        ({"agents": {"a": {"max_steps": 0}}}, None, "agents.a.max_steps", ["greater than or equal to 1"]),
        (
            {"agents": {"a": {"servers": ["exel"]}}, "mcpServers": {"excel": {"command": "x"}}},
            None,
            "agents.a.servers[0]",
            ["no MCP server named 'exel'; configured servers: excel"],
        ),
        ({"agents": []}, None, "agents", ["expected an object, got a list"]),
        (
            {
                "gateway": {"tokens": {"t": {"token": "x", "servers": ["native", "exel"]}}},
                "mcpServers": {"excel": {"command": "x"}},
            },
            None,
            "gateway.tokens.t.servers[1]",
            ["no MCP server named 'exel' ('native' names toolbridge's own tools); configured servers: excel"],
        ),
        (
            {"models": {"m": {"provider": "openai", "model": "x", "temprature": 1}}},
            None,
            "models.m.temprature",
            ["unknown key; did you mean 'temperature'?"],
        ),
        ({"models": {"m": {"provider": "openai"}}}, None, "models.m.model", ['"model" is required']),
        ({"cache": {"ttl": 10, "tool": {}}}, None, "cache.tool", ["did you mean 'tools'?"]),
        ({"cache": {"scope": "global"}}, None, "cache.scope", ["'chat' or 'shared'", "'global'"]),
        ({"cache": {"tools": {"x": -1}}}, None, "cache.tools.x", ["greater than or equal to 0"]),
        ({"server": {"prot": 80}}, None, "server.prot", ["did you mean 'port'?"]),
        ({"server": {"token": 12345}}, None, "server.token", ["valid string"]),
        ({"database": 5}, None, "database", ["valid string", "a number (5)"]),
        ({"routing": {"any_sources": []}}, None, "routing.any_sources", ["did you mean 'any_source'?"]),
        ({"default_model": 3}, None, "default_model", ["valid string"]),
        (
            {"default_model": "${UNSET_VAR_XYZ}"},
            None,
            "default_model",
            ["environment variable 'UNSET_VAR_XYZ' is not set"],
        ),
        (
            {"cache": {"ttl": "${UNSET_VAR_XYZ}"}},
            None,
            "cache.ttl",
            ["environment variable 'UNSET_VAR_XYZ' is not set"],
        ),
    ],
)
def test_broken_configs_name_file_server_and_key(
    isolated: Path, document: Any, server: str | None, key: str | None, fragments: list[str]
) -> None:
    path = write(isolated / "broken.json", document)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    error = info.value
    assert (error.path, error.server, error.key) == (str(path), server, key)
    message = str(error)
    expected_prefix = ": ".join(p for p in (str(path), f"server {server!r}" if server else None, key) if p)
    assert message.startswith(expected_prefix + ": ")
    for fragment in fragments:
        assert fragment in message


# -- other apps' files ------------------------------------------------------------------------------

_CLAUDE_DESKTOP = '{"globalShortcut": "Alt+Space", "mcpServers": {"t": {"command": "uvx", "args": ["x"]}}}'


@pytest.mark.parametrize(
    ("name", "owner"),
    [("claude_desktop_config.json", "Claude Desktop"), ("mcp.json", "VS Code or Cursor")],
)
def test_another_apps_file_loads_with_its_settings_noted_not_refused(
    isolated: Path, name: str, owner: str
) -> None:
    path = write(isolated / name, _CLAUDE_DESKTOP)
    config = load_config(path)
    assert list(config.servers) == ["t"]
    assert config.notes == (f"{path}: {owner}'s settings ignored: globalShortcut",)


def test_toolbridges_own_file_still_refuses_an_unknown_key_and_says_where_others_are_ignored(
    isolated: Path,
) -> None:
    path = write(isolated / "toolbridge.json", _CLAUDE_DESKTOP)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: globalShortcut: unknown key; valid keys: mcpServers")
    assert "ignored only in their own files: claude_desktop_config.json, mcp.json" in message
