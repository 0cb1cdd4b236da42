"""Finding, reading and validating config files.

Two shapes are read: the `mcpServers` object that Claude Desktop, Cursor and most MCP clients use, and
VS Code's `servers` variant. Files may contain `//` and `/* */` comments and trailing commas, as VS Code's
`mcp.json` does.

Every section is validated when the file is loaded, unknown keys included ("did you mean ...?").

Every string value goes through `${VAR}` / `${VAR:-default}` expansion from the environment. VS Code's
`${env:VAR}`, `${workspaceFolder}` and `${userHome}` work too; its `${input:...}` prompts cannot be
answered here. A variable that is not set stops only what uses it: an MCP server when it is started,
a model, agent, the `server` settings or the database when they are used (`Config.check_resolved`);
in `cache`, `routing` and `default_model`, which every command reads, it is an error at once.

Errors name the file, the server and the key, and say what was expected.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import ValidationError

from toolbridge.config._document import (
    Trail,
    Unresolved,
    UnresolvedVariable,
    expand,
    key_path,
    nested_too_deep,
    nesting_error,
    strip_jsonc,
)
from toolbridge.config._errors import describe, explain
from toolbridge.config._servers import parse_server
from toolbridge.config.model import Config, ServerConfig
from toolbridge.errors import ConfigError
from toolbridge.types import NATIVE_SOURCE

__all__ = [
    "CONFIG_ENV_VAR",
    "CONFIG_FILENAME",
    "find_config_file",
    "known_servers",
    "load_config",
    "parse_config",
]

# fmt: off
_TOP_LEVEL_KEYS = (
    "mcpServers", "servers", "inputs", "models", "default_model", "agents", "cache", "server",
    "database", "routing", "gateway", "telemetry",
)
# fmt: on
# Sections whose unset `${VAR}`s wait until they are used: a command that uses another model, agent or
# server, or no database, must not stop on them. (MCP servers keep theirs in `ServerConfig.unresolved`.)
_USED_ON_DEMAND = frozenset({"models", "agents", "server", "database", "gateway", "telemetry"})

# The files other apps keep their MCP servers in, by name: in those, keys that are not toolbridge's are
# that app's settings and are ignored with a note; in toolbridge's own file they are mistakes.
_OTHER_APPS_FILES = {
    "claude_desktop_config.json": "Claude Desktop",
    "mcp.json": "VS Code or Cursor",
    "mcp_config.json": "Windsurf",
}
_OTHER_APPS_HINT = (
    "(other apps' keys are ignored only in their own files: " + ", ".join(_OTHER_APPS_FILES) + ")"
)

CONFIG_ENV_VAR = "TOOLBRIDGE_CONFIG"
CONFIG_FILENAME = "toolbridge.json"


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
    text = strip_jsonc(text)
    too_deep = nesting_error(text)
    if too_deep is not None:
        raise ConfigError(too_deep, path=str(found))
    try:
        data = json.loads(text)
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
        raise ConfigError(f"expected a JSON object at the top level, got {describe(data)}", path=where)
    too_deep = nested_too_deep(data)
    if too_deep is not None:
        raise ConfigError(too_deep, path=where)
    others = [key for key in data if key not in _TOP_LEVEL_KEYS]
    owner = _OTHER_APPS_FILES.get(Path(path).name) if path is not None else None
    notes: list[str] = []
    if others and owner is not None:
        # Another app's file keeps that app's settings too (Claude Desktop's `globalShortcut`): read
        # its servers and leave the rest to it.
        notes.append(f"{where}: {owner}'s settings ignored: {', '.join(others)}")
        data = {key: value for key, value in data.items() if key in _TOP_LEVEL_KEYS}
    for key in data:
        if key not in _TOP_LEVEL_KEYS:
            close = difflib.get_close_matches(key, _TOP_LEVEL_KEYS, n=1)
            hint = (
                f"did you mean {close[0]!r}?"
                if close
                else f"valid keys: {', '.join(_TOP_LEVEL_KEYS)} {_OTHER_APPS_HINT}"
            )
            raise ConfigError(f"unknown key; {hint}", path=where, key=key)
    config_dir = Path(path).parent if path is not None else None
    unresolved: dict[str, Unresolved] = {}

    def defer(trail: Trail, error: UnresolvedVariable) -> None:
        key = key_path(trail)
        if not error.deferrable or trail[0] not in _USED_ON_DEMAND:
            raise ConfigError(str(error), path=where, key=key)
        unresolved.setdefault(key, Unresolved(key, error.problem, error.advice))

    document: dict[str, Any] = {
        key: expand(value, (key,), config_dir, defer)
        for key, value in data.items()
        if key not in ("mcpServers", "servers", "inputs")  # servers: expanded entry by entry below
    }
    document["inputs"] = data.get("inputs", [])
    document["servers"] = _parse_servers(data, where, config_dir)
    document["path"] = Path(path) if path is not None else None
    document["unresolved"] = tuple(unresolved.values())
    document["notes"] = tuple(notes)
    config = _validated(document, unresolved, where)
    _check_references(config, where)
    return config


def _validated(document: dict[str, Any], unresolved: Mapping[str, Unresolved], where: str | None) -> Config:
    messages = {key: f"{value.problem}; {value.advice}" for key, value in unresolved.items()}
    while True:
        try:
            return Config.model_validate(document)
        except ValidationError as error:
            location = tuple(error.errors()[0]["loc"])
            if key_path(location) in unresolved and _drop(document, location):
                # A number or flag whose `${VAR}` is unset: leave the default in its place, as nothing
                # reads it before `check_resolved` has stopped the command that would.
                continue
            key, message = explain(error, Config, messages)
            raise ConfigError(message, path=where, key=key or None) from None


def _drop(document: dict[str, Any], location: tuple[str | int, ...]) -> bool:
    """Remove the value at `location` (the document is `expand`'s copy); False if it is not there."""
    *parents, last = location
    container: Any = document
    for part in parents:
        if not isinstance(container, dict) or part not in container:
            return False
        container = container[part]
    if not isinstance(container, dict) or last not in container:
        return False
    del container[last]
    return True


def _parse_servers(
    data: Mapping[str, Any], where: str | None, config_dir: Path | None
) -> dict[str, ServerConfig]:
    servers: dict[str, ServerConfig] = {}
    for section_key in ("mcpServers", "servers"):
        section = data.get(section_key, {})
        if not isinstance(section, Mapping):
            raise ConfigError(
                f"expected an object mapping server names to server settings, got {describe(section)}",
                path=where,
                key=section_key,
            )
        for name, entry in section.items():
            if name in servers:
                raise ConfigError(
                    "server defined twice (in both 'mcpServers' and 'servers'); keep one",
                    path=where,
                    server=name,
                )
            servers[name] = parse_server(name, entry, where, config_dir)
    return servers


def _check_references(config: Config, where: str | None) -> None:
    """What one model cannot check alone: model ids, and the servers agents and gateway tokens name."""
    for name, model in config.models.items():
        if model.provider.strip().lower() != "demo" and not (model.model or "").strip():
            raise ConfigError(
                '"model" is required: the provider\'s model id, e.g. "gpt-4o-mini"',
                path=where,
                key=f"models.{name}.model",
            )
    for name, agent in config.agents.items():
        for index, server in enumerate(agent.servers or []):
            if server not in config.servers:
                raise ConfigError(
                    f"no MCP server named {server!r}; {known_servers(config)}",
                    path=where,
                    key=f"agents.{name}.servers[{index}]",
                )
    for name, token in config.gateway.tokens.items():
        for index, server in enumerate(token.servers or []):
            if server not in config.servers and server != NATIVE_SOURCE:
                raise ConfigError(
                    f"no MCP server named {server!r} ({NATIVE_SOURCE!r} names toolbridge's own tools); "
                    f"{known_servers(config)}",
                    path=where,
                    key=f"gateway.tokens.{name}.servers[{index}]",
                )


def known_servers(config: Config) -> str:
    """The configured MCP servers, for messages about an unknown one."""
    if not config.servers:
        return "no MCP servers are configured (add them under 'mcpServers')"
    return f"configured servers: {', '.join(config.servers)}"
