"""A server's `protocol`: which MCP revision toolbridge speaks with it."""

from __future__ import annotations

import pytest

from toolbridge.config import parse_config
from toolbridge.errors import ConfigError


def test_protocol_is_auto_unless_the_handshake_revision_is_asked_for() -> None:
    servers = parse_config(
        {"mcpServers": {"new": {"command": "x"}, "old": {"command": "x", "protocol": "2025-11-25"}}}
    ).servers
    assert servers["new"].protocol == "auto"
    assert servers["old"].protocol == "2025-11-25"


def test_an_unknown_protocol_names_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"unknown protocol '2024-01-01'; expected 'auto'.*'2025-11-25'"):
        parse_config({"mcpServers": {"s": {"command": "x", "protocol": "2024-01-01"}}})
