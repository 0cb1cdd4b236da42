"""A server's progress, logging, keep-alive and sharing settings, and the transport left to be found out."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge.config import ServerConfig, parse_config
from toolbridge.errors import ConfigError


def one_server(entry: dict[str, Any]) -> ServerConfig:
    return parse_config({"mcpServers": {"s": entry}}).servers["s"]


def test_progress_logging_and_keepalive_settings_are_read() -> None:
    server = one_server(
        {
            "url": "https://x/mcp",
            "timeout_resets_on_progress": True,
            "log_level": "Warning",
            "ping_interval": 5,
        }
    )
    assert (server.timeout_resets_on_progress, server.log_level, server.ping_interval) == (
        True,
        "warning",
        5.0,
    )
    assert one_server({"command": "x"}).log_level is None  # the server's own level, unless configured


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "x", "log_level": "loud"}, "log_level: expected one of debug, info, notice, warning"),
        ({"command": "x", "ping_interval": 0}, "ping_interval: expected a positive number of seconds"),
        (
            {"command": "x", "timeout_resets_on_progress": "yes"},
            "timeout_resets_on_progress: expected true or false",
        ),
        ({"command": "x", "log_levl": "info"}, "did you mean 'log_level'?"),
        ({"command": "x", "shared": "no"}, "shared: expected true or false"),
    ],
)
def test_a_wrong_setting_is_named_with_what_is_expected(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        one_server(entry)
    assert message in str(raised.value)


def test_only_an_http_server_without_a_type_may_fall_back_to_sse() -> None:
    assert one_server({"url": "https://x/mcp"}).sse_fallback is True
    assert one_server({"url": "https://x/mcp", "type": "http"}).sse_fallback is False
    assert one_server({"url": "https://x/sse"}).transport == "sse"  # the path says so
    assert one_server({"command": "x"}).sse_fallback is False


def test_the_discover_probe_waits_briefly_unless_configured() -> None:
    assert one_server({"command": "x"}).discover_timeout == 1.0
    assert one_server({"command": "x", "discover_timeout": 0.5}).discover_timeout == 0.5
    with pytest.raises(ConfigError, match="discover_timeout: expected a positive number of seconds"):
        one_server({"command": "x", "discover_timeout": -1})


def test_servers_are_shared_by_the_gateways_clients_unless_configured_not_to_be() -> None:
    assert one_server({"command": "x"}).shared is True
    assert one_server({"command": "x", "shared": False}).shared is False
