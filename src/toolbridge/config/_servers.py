"""One MCP server entry (`mcpServers` or VS Code's `servers`) to a `ServerConfig`.

Validated by hand rather than by pydantic: the entry shapes of the different MCP clients overlap, and
each mistake deserves its own advice (a string where a list belongs, a number in quotes, ...).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, get_args

from pydantic import ValidationError

from toolbridge.config._document import Trail, UnresolvedVariable, expand, key_path
from toolbridge.config._errors import describe, explain
from toolbridge.config._server_auth import parse_server_auth
from toolbridge.config.asks import SamplingConfig
from toolbridge.config.model import ProtocolChoice, ServerConfig, Transport
from toolbridge.errors import ConfigError
from toolbridge.types import QUALIFIER

__all__ = ["parse_server"]

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
    "timeout_resets_on_progress", "log_level", "ping_interval",
    "auth", "protocol", "discover_timeout", "shared",
)
_CLIENT_KEYS = ("sampling", "roots")  # what the server may ask of its client (`config.asks`)
# fmt: on
# Keys other clients write into the same entries that do not change how to reach the server.
_FOREIGN_KEYS = frozenset({"description", "autoApprove", "alwaysAllow", "dev", "gallery", "version", "name"})
_TOOLS_KEYS = ("allow", "deny")


def parse_server(name: str, entry: Any, where: str | None, config_dir: Path | None) -> ServerConfig:
    """The server `name`'s entry as a `ServerConfig`; `where` (the file) goes into error messages.

    An unset `${VAR}` does not stop the load: it is kept in `ServerConfig.unresolved`, so only using
    this server fails on it.
    """
    unresolved: dict[str, str] = {}

    def fail(message: str, key: str | None = None) -> ConfigError:
        # A value that could not be checked because its variable is unset: say that, not "wrong type".
        message = unresolved.get(key, message) if key is not None else message
        return ConfigError(message, path=where, server=name, key=key)

    if not name.strip():
        raise fail("server names must not be empty")
    if QUALIFIER in name:
        raise fail(
            f"server names must not contain {QUALIFIER!r} (toolbridge joins server and tool names "
            "with it); rename the server"
        )
    if not isinstance(entry, Mapping):
        raise fail(f"expected an object with the server's settings, got {describe(entry)}")

    def defer(trail: Trail, error: UnresolvedVariable) -> None:
        if not error.deferrable:
            raise fail(str(error), key_path(trail))
        unresolved.setdefault(key_path(trail), str(error))

    expanded: dict[str, Any] = expand(dict(entry), (), config_dir, defer)
    for key in expanded:
        if key in _SERVER_KEYS or key in _CLIENT_KEYS or key in _FOREIGN_KEYS:
            continue
        if key == "envFile":
            raise fail("'envFile' is not supported; put the variables in 'env' instead", key)
        close = difflib.get_close_matches(key, (*_SERVER_KEYS, *_CLIENT_KEYS), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(_SERVER_KEYS)}"
        raise fail(f"unknown key; {hint}", key)

    fields: dict[str, Any] = {"name": name, "transport": _transport(expanded, fail)}
    # No type given: an HTTP server may be an old SSE one behind a URL that does not say so.
    named_type = "type" in expanded or "transport" in expanded
    fields["sse_fallback"] = fields["transport"] == "streamable-http" and not named_type
    if "command" in expanded:
        fields["command"] = _non_empty_string(expanded["command"], "command", fail)
    if "url" in expanded:
        url = _non_empty_string(expanded["url"], "url", fail)
        if "url" not in unresolved and not url.startswith(("http://", "https://")):
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
    if "protocol" in expanded:
        fields["protocol"] = _protocol(expanded["protocol"], fail)
    if "discover_timeout" in expanded:
        fields["discover_timeout"] = _seconds(expanded["discover_timeout"], "discover_timeout", fail)
    if "auth" in expanded:
        if fields["transport"] == "stdio":
            raise fail("'auth' (OAuth) is for servers reached over HTTP ('url'); remove it", "auth")
        fields["auth"] = parse_server_auth(expanded["auth"], fail)
    if "sampling" in expanded:
        fields["sampling"] = _sampling(expanded["sampling"], fail)
    if "roots" in expanded:
        fields["roots"] = _string_list(expanded["roots"], "roots", fail)
    fields.update(_session_options(expanded, fail))
    fields["unresolved"] = tuple(str(fail(message, key)) for key, message in unresolved.items())
    return ServerConfig(**fields)


_Fail = Callable[..., ConfigError]

_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def _session_options(entry: Mapping[str, Any], fail: _Fail) -> dict[str, Any]:
    """Progress, logging, keep-alive and sharing settings of the session."""
    options: dict[str, Any] = {}
    if "timeout_resets_on_progress" in entry:
        key = "timeout_resets_on_progress"
        options[key] = _boolean(entry[key], key, fail)
    if "log_level" in entry:
        level = entry["log_level"]
        if not isinstance(level, str) or level.lower() not in _LOG_LEVELS:
            raise fail(f"expected one of {', '.join(_LOG_LEVELS)}, got {describe(level)}", "log_level")
        options["log_level"] = level.lower()
    if "ping_interval" in entry:
        options["ping_interval"] = _seconds(entry["ping_interval"], "ping_interval", fail)
    if "shared" in entry:
        options["shared"] = _boolean(entry["shared"], "shared", fail)
    return options


def _protocol(value: object, fail: _Fail) -> ProtocolChoice:
    choices: tuple[ProtocolChoice, ...] = get_args(ProtocolChoice)
    for choice in choices:
        if value == choice:
            return choice
    raise fail(f"unknown protocol {value!r}; expected 'auto' (the default) or '2025-11-25'", "protocol")


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
    # The old SSE transport conventionally serves at /sse; everything else is streamable HTTP first
    # (falling back to SSE when the server answers like an old one: see `ServerConfig.sse_fallback`).
    url = entry["url"]
    return "sse" if isinstance(url, str) and url.rstrip("/").endswith("/sse") else "streamable-http"


def _non_empty_string(value: Any, key: str, fail: _Fail) -> str:
    if not isinstance(value, str):
        raise fail(f"expected a string, got {describe(value)}", key)
    if not value.strip():
        raise fail("expected a non-empty string, got an empty one", key)
    return value


def _string_list(value: Any, key: str, fail: _Fail) -> list[str]:
    if not isinstance(value, list):
        hint = f' (write ["{value}"] or split it into separate items)' if isinstance(value, str) else ""
        raise fail(f"expected a list of strings, got {describe(value)}{hint}", key)
    for index, item in enumerate(value):
        if not isinstance(item, str):
            hint = f' (write it in quotes: "{item}")' if isinstance(item, int | float) else ""
            raise fail(f"expected a string, got {describe(item)}{hint}", f"{key}[{index}]")
    return list(value)


def _string_map(value: Any, key: str, fail: _Fail) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise fail(
            f'expected an object of names to strings (like {{"NAME": "value"}}), got {describe(value)}', key
        )
    for name, item in value.items():
        if not isinstance(item, str):
            hint = f' (write it in quotes: "{item}")' if isinstance(item, int | float) else ""
            raise fail(f"expected a string, got {describe(item)}{hint}", f"{key}.{name}")
    return dict(value)


def _boolean(value: Any, key: str, fail: _Fail) -> bool:
    # Strings come from `${VAR}` expansion: "enabled": "${USE_X:-true}".
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise fail(f"expected true or false, got {describe(value)}", key)
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
        raise fail(f"expected a positive number of seconds, got {describe(value)}", key)
    return number


def _sampling(value: Any, fail: _Fail) -> SamplingConfig:
    try:
        return SamplingConfig.model_validate(value)
    except ValidationError as exc:
        key, message = explain(exc, SamplingConfig, {})
        raise fail(message, f"sampling.{key}" if key else "sampling") from None


def _tool_filters(value: Any, fail: _Fail) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise fail(
            f'expected an object like {{"allow": [...], "deny": [...]}}, got {describe(value)}', "tools"
        )
    for key in value:
        if key not in _TOOLS_KEYS:
            close = difflib.get_close_matches(key, _TOOLS_KEYS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "valid keys: 'allow', 'deny'"
            raise fail(f"unknown key; {hint}", f"tools.{key}")
    filters: dict[str, Any] = {}
    if "allow" in value:
        filters["tools_allow"] = _string_list(value["allow"], "tools.allow", fail)
    if "deny" in value:
        filters["tools_deny"] = _string_list(value["deny"], "tools.deny", fail)
    return filters
