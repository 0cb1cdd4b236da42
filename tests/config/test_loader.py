"""Reading config files: the formats, `${VAR}` expansion and where files are looked for (errors: test_loader_errors.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from loader_helpers import write

from toolbridge.config import Config, ServerConfig, find_config_file, load_config, parse_config
from toolbridge.errors import ConfigError

pytestmark = pytest.mark.usefixtures("isolated")  # no config of the real machine leaks in


def one_server(entry: dict[str, Any], *, section: str = "mcpServers") -> ServerConfig:
    return parse_config({section: {"s": entry}}).servers["s"]


# -- formats ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        pytest.param(
            {"command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "cwd": "/srv"},
            {"transport": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "cwd": "/srv"},
            id="claude-desktop-stdio",
        ),
        pytest.param(
            {"url": "https://x.test/mcp", "headers": {"Authorization": "Bearer t"}},
            {
                "transport": "streamable-http",
                "url": "https://x.test/mcp",
                "headers": {"Authorization": "Bearer t"},
            },
            id="url-infers-streamable-http",
        ),
        pytest.param(
            {"url": "http://127.0.0.1:9/sse"}, {"transport": "sse"}, id="url-ending-in-sse-infers-sse"
        ),
        pytest.param({"type": "sse", "url": "http://h/events"}, {"transport": "sse"}, id="type-sse"),
        pytest.param(
            {"type": "http", "url": "http://h/mcp"}, {"transport": "streamable-http"}, id="type-http"
        ),
        pytest.param(
            {"transport": "streamable-http", "url": "http://h/sse"},
            {"transport": "streamable-http"},
            id="explicit-transport-beats-sse-suffix",
        ),
        pytest.param(
            {"type": "streamableHttp", "url": "http://h/"}, {"transport": "streamable-http"}, id="camel"
        ),
        pytest.param(
            {"type": "stdio", "command": "srv"}, {"transport": "stdio", "args": []}, id="type-stdio"
        ),
        pytest.param(
            {"type": "stdio", "transport": "stdio", "command": "srv"},
            {"transport": "stdio"},
            id="agreeing-keys",
        ),
    ],
)
def test_server_entries_become_server_configs(entry: dict[str, Any], expected: dict[str, Any]) -> None:
    server = one_server(entry)
    assert server.name == "s"
    for key, value in expected.items():
        assert getattr(server, key) == value, key


def test_options_enabled_timeouts_and_tool_filters() -> None:
    server = one_server(
        {
            "command": "srv",
            "enabled": False,
            "timeout": 12,
            "connectTimeout": 3.5,
            "tools": {"allow": ["read_*"], "deny": ["read_secret"]},
        }
    )
    assert (server.enabled, server.timeout, server.connect_timeout) == (False, 12.0, 3.5)
    assert (server.tools_allow, server.tools_deny) == (["read_*"], ["read_secret"])
    assert one_server({"command": "srv", "connect_timeout": 7}).connect_timeout == 7.0


def test_defaults_when_options_are_absent() -> None:
    server = one_server({"command": "srv"})
    default = ServerConfig(name="s", transport="stdio", command="srv")
    assert server == default


def test_cline_style_disabled_flag_turns_a_server_off() -> None:
    assert one_server({"command": "srv", "disabled": True}).enabled is False
    assert one_server({"command": "srv", "disabled": False}).enabled is True


def test_keys_other_clients_write_are_ignored() -> None:
    server = one_server(
        {"command": "srv", "autoApprove": ["x"], "description": "d", "dev": {"watch": "*.py"}}
    )
    assert server.command == "srv"


def test_vscode_servers_variant_with_inputs() -> None:
    config = parse_config(
        {
            "inputs": [{"type": "promptString", "id": "token", "description": "API token", "password": True}],
            "servers": {
                "local": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
                "remote": {"type": "http", "url": "https://api.test/mcp"},
                "legacy": {"type": "sse", "url": "https://api.test/sse"},
            },
        }
    )
    assert {n: s.transport for n, s in config.servers.items()} == {
        "local": "stdio",
        "remote": "streamable-http",
        "legacy": "sse",
    }
    assert config.inputs[0]["id"] == "token"


def test_both_sections_are_merged() -> None:
    config = parse_config({"mcpServers": {"a": {"command": "a"}}, "servers": {"b": {"url": "http://b/"}}})
    assert list(config.servers) == ["a", "b"]


def test_every_section_is_read_into_typed_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL_KEY", "sk-1")
    document = {
        "mcpServers": {"a": {"command": "${MODEL_KEY}"}},
        "models": {"fast": {"provider": "openai", "model": "gpt-4o-mini", "api_key": "${MODEL_KEY}"}},
        "default_model": "fast",
        "agents": {"helper": {"instructions": "${UNSET_VAR_XYZ:-be brief}", "servers": ["a"]}},
        "cache": {"ttl": 30, "tools": {"search": 60}, "servers": {"a": 0}, "scope": "shared"},
        "server": {"port": 9000, "allowed_hosts": ["box.lan"]},
        "database": "postgresql://u@h/db",
        "routing": {"any_source": ["appflowy"]},
    }
    config = parse_config(document)
    assert config.servers["a"].command == "sk-1"
    api_key = config.models["fast"].api_key
    assert api_key is not None
    assert api_key.get_secret_value() == "sk-1"
    assert config.default_model == "fast"
    assert (config.agents["helper"].name, config.agents["helper"].instructions) == ("helper", "be brief")
    assert (config.cache.ttl, config.cache.tools, config.cache.servers, config.cache.scope) == (
        30,
        {"search": 60},
        {"a": 0},
        "shared",
    )
    assert (config.server.port, config.server.allowed_hosts) == (9000, ["box.lan"])
    assert config.database == "postgresql://u@h/db"
    assert config.routing.any_source == ["appflowy"]
    assert not hasattr(config, "raw")
    assert document["models"]["fast"]["api_key"] == "${MODEL_KEY}", "the input must not be mutated"


def test_an_empty_document_has_no_servers() -> None:
    assert parse_config({}) == Config()


# -- ${VAR} expansion -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${HOME_DIR}/data", "/home/u/data"),
        ("${HOME_DIR:-/tmp}", "/home/u"),
        ("${UNSET_VAR_XYZ:-/tmp}", "/tmp"),
        ("${UNSET_VAR_XYZ:-}", ""),
        ("${EMPTY_VAR}", ""),
        ("${EMPTY_VAR:-fallback}", "fallback"),
        ("${UNSET_VAR_XYZ:-a:-b}", "a:-b"),
        ("${env:HOME_DIR}", "/home/u"),
        ("a${TOKEN}b${TOKEN}c", "aXbXc"),
        ("no variables $HOME_DIR here", "no variables $HOME_DIR here"),
    ],
)
def test_variables_expand_in_every_string(monkeypatch: pytest.MonkeyPatch, value: str, expected: str) -> None:
    monkeypatch.setenv("HOME_DIR", "/home/u")
    monkeypatch.setenv("TOKEN", "X")
    monkeypatch.setenv("EMPTY_VAR", "")
    server = one_server({"command": "srv", "args": [value], "env": {"V": value}})
    assert server.args == [expected]
    assert server.env == {"V": expected}


def test_expansion_reaches_urls_headers_and_options(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PORT", "8123")
    monkeypatch.setenv("TOKEN", "t0k")
    server = one_server(
        {
            "url": "http://127.0.0.1:${PORT}/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}"},
            "timeout": "${TIMEOUT_UNSET:-45}",
            "enabled": "${ENABLED_UNSET:-false}",
        }
    )
    assert server.url == "http://127.0.0.1:8123/mcp"
    assert server.headers == {"Authorization": "Bearer t0k"}
    assert (server.timeout, server.enabled) == (45.0, False)


def test_vscode_workspace_folder_is_the_folder_above_dot_vscode(isolated: Path) -> None:
    path = write(
        isolated / "proj" / ".vscode" / "mcp.json", {"servers": {"s": {"command": "${workspaceFolder}/run"}}}
    )
    assert load_config(path).servers["s"].command == f"{isolated / 'proj'}/run"


def test_a_disabled_server_may_reference_unset_variables() -> None:
    server = one_server({"url": "https://h/mcp", "headers": {"K": "${UNSET_VAR_XYZ}"}, "enabled": False})
    assert server.headers == {"K": "${UNSET_VAR_XYZ}"}


@pytest.mark.parametrize(
    ("entry", "key", "fragment"),
    [
        ({"command": "x", "env": {"K": "${UNSET_VAR_XYZ}"}}, "env.K", "'UNSET_VAR_XYZ' is not set"),
        ({"command": "x", "args": ["${UNSET_VAR_XYZ}"]}, "args[0]", "'UNSET_VAR_XYZ' is not set"),
        ({"url": "${UNSET_VAR_XYZ}/mcp"}, "url", "'UNSET_VAR_XYZ' is not set"),
        (
            {"url": "http://h/", "headers": {"K": "${input:token}"}},
            "headers.K",
            "VS Code input variable ${input:token} cannot be prompted for by toolbridge; use an environment",
        ),
    ],
)
def test_a_server_with_unset_variables_loads_and_says_why_it_cannot_start(
    isolated: Path, entry: dict[str, Any], key: str, fragment: str
) -> None:
    path = write(isolated / "tb.json", {"mcpServers": {"s": entry}})
    server = load_config(path).servers["s"]
    assert len(server.unresolved) == 1
    assert server.unresolved[0].startswith(f"{path}: server 's': {key}: ")
    assert fragment in server.unresolved[0]


def test_a_server_value_of_the_wrong_type_blames_its_unset_variable() -> None:
    with pytest.raises(ConfigError, match=r"timeout: environment variable 'UNSET_VAR_XYZ' is not set"):
        one_server({"command": "x", "timeout": "${UNSET_VAR_XYZ}"})


LAZY = {
    "models": {
        "fast": {"provider": "deepseek", "model": "deepseek-chat", "api_key": "${UNSET_KEY_XYZ}"},
        "local": {"provider": "ollama", "model": "qwen3"},
    },
    "agents": {"helper": {"instructions": "Hello ${UNSET_NAME_XYZ}"}, "plain": {}},
    "server": {"token": "${UNSET_TOKEN_XYZ}"},
    "database": "${UNSET_DB_XYZ}",
}


@pytest.mark.parametrize(
    ("section", "used_by", "key", "variable"),
    [
        ("models.fast", "model 'fast'", "models.fast.api_key", "UNSET_KEY_XYZ"),
        ("agents.helper", "agent 'helper'", "agents.helper.instructions", "UNSET_NAME_XYZ"),
        ("server", "toolbridge serve", "server.token", "UNSET_TOKEN_XYZ"),
        ("database", "the database setting", "database", "UNSET_DB_XYZ"),
    ],
)
def test_unset_variables_stop_only_what_uses_them(
    isolated: Path, section: str, used_by: str, key: str, variable: str
) -> None:
    config = load_config(write(isolated / "tb.json", LAZY))  # loading does not stop on them
    config.check_resolved("models.local", used_by="model 'local'")  # nor does another section
    config.check_resolved("agents.plain", used_by="agent 'plain'")
    with pytest.raises(ConfigError) as info:
        config.check_resolved(section, used_by=used_by)
    assert (info.value.path, info.value.key) == (str(isolated / "tb.json"), key)
    assert f"environment variable {variable!r} is not set ({used_by} uses it); set it" in str(info.value)


def test_a_number_whose_variable_is_unset_waits_for_its_use_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SET_TEMPERATURE_XYZ", "0.5")
    entry = {
        "provider": "openai",
        "model": "x",
        "temperature": "${UNSET_VAR_XYZ}",
        "max_tokens": "${UNSET_VAR_XYZ}",
    }
    config = parse_config(
        {
            "models": {"m": entry, "n": {**entry, "temperature": "${SET_TEMPERATURE_XYZ}", "max_tokens": 9}},
            "agents": {"a": {"max_steps": "${UNSET_VAR_XYZ}"}},
        }
    )
    assert (config.models["n"].temperature, config.models["n"].max_tokens) == (0.5, 9)
    with pytest.raises(ConfigError, match=r"models\.m\.temperature: environment variable 'UNSET_VAR_XYZ'"):
        config.check_resolved("models.m", used_by="model 'm'")
    with pytest.raises(ConfigError, match=r"agents\.a\.max_steps: environment variable 'UNSET_VAR_XYZ'"):
        config.check_resolved("agents.a", used_by="agent 'a'")


def test_a_syntax_error_in_a_variable_stops_the_load_even_where_it_is_not_used() -> None:
    with pytest.raises(ConfigError, match=r"models\.m\.api_key: \$\{not valid\} is not a valid variable"):
        parse_config({"models": {"m": {"provider": "openai", "model": "x", "api_key": "${not valid}"}}})


# -- lookup order -----------------------------------------------------------------------------------

DOC = {"mcpServers": {"s": {"command": "srv"}}}


def test_no_file_anywhere_gives_an_empty_config() -> None:
    assert find_config_file() is None
    assert load_config() == Config()


def test_lookup_order(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user_file = write(isolated / "user-config" / "toolbridge" / "toolbridge.json", DOC)
    assert load_config().path == user_file

    cwd_file = write(isolated / "work" / "toolbridge.json", DOC)
    assert load_config().path == cwd_file

    env_file = write(isolated / "from-env.json", DOC)
    monkeypatch.setenv("TOOLBRIDGE_CONFIG", str(env_file))
    assert load_config().path == env_file

    arg_file = write(isolated / "from-arg.json", DOC)
    assert load_config(arg_file).path == arg_file
    assert load_config(str(arg_file)).servers["s"].command == "srv"


def test_an_explicit_path_that_does_not_exist_is_an_error(isolated: Path) -> None:
    write(isolated / "work" / "toolbridge.json", DOC)  # must not be used as a fallback
    missing = isolated / "missing.json"
    with pytest.raises(ConfigError, match="config file not found") as info:
        load_config(missing)
    assert info.value.path == str(missing)
    assert str(missing) in str(info.value)


def test_a_missing_file_named_by_the_environment_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLBRIDGE_CONFIG", "/nonexistent/tb.json")
    with pytest.raises(ConfigError, match=r"/nonexistent/tb\.json: .*\$TOOLBRIDGE_CONFIG"):
        load_config()


def test_relative_cwd_is_resolved_against_the_config_file(isolated: Path) -> None:
    path = write(
        isolated / "conf" / "toolbridge.json", {"mcpServers": {"s": {"command": "x", "cwd": "servers"}}}
    )
    assert load_config(path).servers["s"].cwd == str(isolated / "conf" / "servers")


def test_comments_and_trailing_commas_are_accepted(isolated: Path) -> None:
    text = """{
      // VS Code writes comments in mcp.json
      "servers": {
        /* a block
           comment */ "s": {"command": "srv", "args": ["http://not-a-comment", "a,}", "q\\"//x"],},
      },
    }"""
    config = load_config(write(isolated / "mcp.json", text))
    assert config.servers["s"].args == ["http://not-a-comment", "a,}", 'q"//x']


def test_an_empty_file_has_no_servers(isolated: Path) -> None:
    path = write(isolated / "empty.json", "  \n")
    assert load_config(path) == Config(path=path)
