"""Finding, reading and validating config files.

Two shapes are read: the `mcpServers` object that Claude Desktop, Cursor and most MCP clients use, and
VS Code's `servers` variant. Files may contain `//` and `/* */` comments and trailing commas, as VS Code's
`mcp.json` does.

Every string value goes through `${VAR}` / `${VAR:-default}` expansion from the environment. VS Code's
`${env:VAR}`, `${workspaceFolder}` and `${userHome}` work too; its `${input:...}` prompts cannot be
answered here and are reported as errors (in enabled servers only: a disabled server is left as is).

Errors name the file, the server and the key, and say what was expected.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import platformdirs

from toolbridge.config._document import Trail, expand, key_path, strip_jsonc
from toolbridge.config.model import Config, ServerConfig, Transport
from toolbridge.errors import ConfigError

__all__ = ["CONFIG_ENV_VAR", "CONFIG_FILENAME", "find_config_file", "load_config", "parse_config"]

CONFIG_ENV_VAR = "TOOLBRIDGE_CONFIG"
CONFIG_FILENAME = "toolbridge.json"

# Joins server and tool names in exposed tool names (`excel__read_data`), so a server name can't hold it.
_NAME_SEPARATOR = "__"

_TRANSPORT_ALIASES: dict[str, Transport] = {
    "stdio": "stdio",
    "sse": "sse",
    "http": "streamable-http",
    "streamablehttp": "streamable-http",
}

# fmt: off
_SERVER_KEYS = (
    "type", "transport", "command", "args", "env", "cwd", "url", "headers",
    "enabled", "disabled", "timeout", "connect_timeout", "connectTimeout", "tools",
)
# fmt: on
# Keys other clients write into the same entries that do not change how to reach the server.
_FOREIGN_KEYS = frozenset({"description", "autoApprove", "alwaysAllow", "dev", "gallery", "version", "name"})
_TOOLS_KEYS = ("allow", "deny")


# -- finding and reading ------------------------------------------------------------------------------


def find_config_file(path: str | Path | None = None) -> Path | None:
    """The config file to read: `path`, then `$TOOLBRIDGE_CONFIG`, `./toolbridge.json`, the user config dir.

    A path given explicitly (argument or environment variable) must exist. Returns None when no file
    is found in the default places.
    """
    if path is not None:
        explicit = Path(path).expanduser()
        if not explicit.is_file():
            raise ConfigError(
                "config file not found (or not a file); check the path, e.g. the one given with --config",
                path=str(explicit),
            )
        return explicit
    from_env = os.environ.get(CONFIG_ENV_VAR, "").strip()
    if from_env:
        explicit = Path(from_env).expanduser()
        if not explicit.is_file():
            raise ConfigError(
                f"config file named by ${CONFIG_ENV_VAR} not found; fix or unset ${CONFIG_ENV_VAR}",
                path=str(explicit),
            )
        return explicit
    for candidate in (
        Path.cwd() / CONFIG_FILENAME,
        Path(platformdirs.user_config_dir("toolbridge")) / CONFIG_FILENAME,
    ):
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | Path | None = None) -> Config:
    """Read and validate the config file (see `find_config_file`); no file at all gives an empty Config."""
    found = find_config_file(path)
    if found is None:
        return Config()
    try:
        text = found.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the file: {exc}", path=str(found)) from exc
    if not text.strip():
        return Config(path=found)
    try:
        data = json.loads(strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", path=str(found)
        ) from exc
    return parse_config(data, path=found)


# -- validating -----------------------------------------------------------------------------------


def parse_config(data: Any, *, path: str | Path | None = None) -> Config:
    """Validate an already-decoded config document (the JSON object) and build a `Config`."""
    where = str(path) if path is not None else None
    if not isinstance(data, Mapping):
        raise ConfigError(f"expected a JSON object at the top level, got {_describe(data)}", path=where)
    config_dir = Path(path).parent if path is not None else None

    def strict(trail: Trail, message: str) -> None:
        raise ConfigError(message, path=where, key=key_path(trail))

    raw: dict[str, Any] = {}
    sections: list[tuple[str, Any]] = []
    for key, value in data.items():
        if key in ("mcpServers", "servers"):
            sections.append((key, value))
            raw[key] = value  # expanded per server below, where a disabled server may keep its variables
        else:
            raw[key] = expand(value, (key,), config_dir, strict)

    servers: dict[str, ServerConfig] = {}
    for section_key, section in sections:
        if not isinstance(section, Mapping):
            raise ConfigError(
                f"expected an object mapping server names to server settings, got {_describe(section)}",
                path=where,
                key=section_key,
            )
        expanded_section: dict[str, Any] = {}
        for name, entry in section.items():
            if name in servers:
                raise ConfigError(
                    "server defined twice (in both 'mcpServers' and 'servers'); keep one",
                    path=where,
                    server=name,
                )
            expanded_section[name], servers[name] = _parse_server(name, entry, where, config_dir)
        raw[section_key] = expanded_section
    return Config(servers=servers, path=Path(path) if path is not None else None, raw=raw)


def _parse_server(
    name: str, entry: Any, where: str | None, config_dir: Path | None
) -> tuple[Any, ServerConfig]:
    def fail(message: str, key: str | None = None) -> ConfigError:
        return ConfigError(message, path=where, server=name, key=key)

    if not name.strip():
        raise fail("server names must not be empty")
    if _NAME_SEPARATOR in name:
        raise fail(
            f"server names must not contain {_NAME_SEPARATOR!r} (toolbridge joins server and tool names "
            "with it); rename the server"
        )
    if not isinstance(entry, Mapping):
        raise fail(f"expected an object with the server's settings, got {_describe(entry)}")

    enabled_before_expansion = entry.get("enabled", True) is not False and entry.get("disabled") is not True

    def unresolved(trail: Trail, message: str) -> None:
        if enabled_before_expansion:
            raise fail(message, key_path(trail))

    expanded: dict[str, Any] = expand(dict(entry), (), config_dir, unresolved)
    for key in expanded:
        if key in _SERVER_KEYS or key in _FOREIGN_KEYS:
            continue
        if key == "envFile":
            raise fail("'envFile' is not supported; put the variables in 'env' instead", key)
        close = difflib.get_close_matches(key, _SERVER_KEYS, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(_SERVER_KEYS)}"
        raise fail(f"unknown key {key!r}; {hint}", key)

    fields: dict[str, Any] = {"name": name, "transport": _transport(expanded, fail)}
    if "command" in expanded:
        fields["command"] = _non_empty_string(expanded["command"], "command", fail)
    if "url" in expanded:
        url = _non_empty_string(expanded["url"], "url", fail)
        if not url.startswith(("http://", "https://")):
            raise fail(f"expected an http:// or https:// URL, got {url!r}", "url")
        fields["url"] = url
    if "args" in expanded:
        fields["args"] = _string_list(expanded["args"], "args", fail)
    for key in ("env", "headers"):
        if key in expanded:
            fields[key] = _string_map(expanded[key], key, fail)
    if "cwd" in expanded:
        cwd = Path(_non_empty_string(expanded["cwd"], "cwd", fail)).expanduser()
        # A relative cwd means relative to the config file, not to wherever toolbridge happens to run.
        fields["cwd"] = str(config_dir / cwd if config_dir is not None and not cwd.is_absolute() else cwd)
    enabled = _boolean(expanded.get("enabled", True), "enabled", fail)
    disabled = _boolean(expanded.get("disabled", False), "disabled", fail)
    fields["enabled"] = enabled and not disabled
    if "timeout" in expanded:
        fields["timeout"] = _seconds(expanded["timeout"], "timeout", fail)
    if "connect_timeout" in expanded and "connectTimeout" in expanded:
        raise fail("give 'connect_timeout' or 'connectTimeout', not both", "connectTimeout")
    for key in ("connect_timeout", "connectTimeout"):
        if key in expanded:
            fields["connect_timeout"] = _seconds(expanded[key], key, fail)
    if "tools" in expanded:
        fields.update(_tool_filters(expanded["tools"], fail))
    return expanded, ServerConfig(**fields)


_Fail = Callable[..., ConfigError]


def _transport(entry: Mapping[str, Any], fail: _Fail) -> Transport:
    has_command, has_url = "command" in entry, "url" in entry
    named: dict[str, Transport] = {}
    for key in ("type", "transport"):
        if key in entry:
            value = entry[key]
            normalized = value.lower().replace("-", "").replace("_", "") if isinstance(value, str) else None
            if normalized not in _TRANSPORT_ALIASES:
                raise fail(
                    f"unknown transport {value!r}; expected 'stdio', 'sse', 'streamable-http' (or 'http')",
                    key,
                )
            named[key] = _TRANSPORT_ALIASES[normalized]
    if len(set(named.values())) > 1:
        raise fail(
            f"'type' says {entry['type']!r} but 'transport' says {entry['transport']!r}; keep one",
            "transport",
        )
    if has_command and has_url:
        raise fail(
            "both 'command' and 'url' given; use 'command' (with 'args') to start a local server over stdio, "
            "or 'url' to connect to a running one over HTTP, not both"
        )
    if not has_command and not has_url:
        raise fail(
            "expected 'command' (to start a local server over stdio) or 'url' (to connect over HTTP); "
            "neither was given"
        )
    if named:
        transport = next(iter(named.values()))
        key = next(iter(named))
        if transport == "stdio" and not has_command:
            raise fail(
                "a stdio server needs 'command' (and 'args'), not 'url'; or set the type to 'http'", key
            )
        if transport != "stdio" and not has_url:
            raise fail(f"a {transport} server needs 'url', not 'command'; or set the type to 'stdio'", key)
        return transport
    if has_command:
        return "stdio"
    # The old SSE transport conventionally serves at /sse; everything else is streamable HTTP.
    url = entry["url"]
    return "sse" if isinstance(url, str) and url.rstrip("/").endswith("/sse") else "streamable-http"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _non_empty_string(value: Any, key: str, fail: _Fail) -> str:
    if not isinstance(value, str):
        raise fail(f"expected a string, got {_describe(value)}", key)
    if not value.strip():
        raise fail("expected a non-empty string, got an empty one", key)
    return value


def _string_list(value: Any, key: str, fail: _Fail) -> list[str]:
    if not isinstance(value, list):
        hint = f' (write ["{value}"] or split it into separate items)' if isinstance(value, str) else ""
        raise fail(f"expected a list of strings, got {_describe(value)}{hint}", key)
    for index, item in enumerate(value):
        if not isinstance(item, str):
            hint = f' (write it in quotes: "{item}")' if isinstance(item, int | float) else ""
            raise fail(f"expected a string, got {_describe(item)}{hint}", f"{key}[{index}]")
    return list(value)


def _string_map(value: Any, key: str, fail: _Fail) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise fail(
            f'expected an object of names to strings (like {{"NAME": "value"}}), got {_describe(value)}', key
        )
    for name, item in value.items():
        if not isinstance(item, str):
            hint = f' (write it in quotes: "{item}")' if isinstance(item, int | float) else ""
            raise fail(f"expected a string, got {_describe(item)}{hint}", f"{key}.{name}")
    return dict(value)


def _boolean(value: Any, key: str, fail: _Fail) -> bool:
    # Strings come from `${VAR}` expansion: "enabled": "${USE_X:-true}".
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise fail(f"expected true or false, got {_describe(value)}", key)
    return value


def _seconds(value: Any, key: str, fail: _Fail) -> float:
    number: float | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not number > 0 or number == float("inf"):
        raise fail(f"expected a positive number of seconds, got {_describe(value)}", key)
    return number


def _tool_filters(value: Any, fail: _Fail) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise fail(
            f'expected an object like {{"allow": [...], "deny": [...]}}, got {_describe(value)}', "tools"
        )
    for key in value:
        if key not in _TOOLS_KEYS:
            close = difflib.get_close_matches(key, _TOOLS_KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "valid keys: 'allow', 'deny'"
            raise fail(f"unknown key {key!r} in 'tools'; {hint}", f"tools.{key}")
    filters: dict[str, Any] = {}
    if "allow" in value:
        filters["tools_allow"] = _string_list(value["allow"], "tools.allow", fail)
    if "deny" in value:
        filters["tools_deny"] = _string_list(value["deny"], "tools.deny", fail)
    return filters
