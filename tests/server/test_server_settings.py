"""The `server` section of the config as the server's settings: typed, overridden by the environment and
the command line, and an unset `${VAR}` in it stops `serve` alone, naming the variable."""

from __future__ import annotations

import pytest

from toolbridge.config import parse_config
from toolbridge.errors import ConfigError
from toolbridge.server import settings_from_config


def test_the_section_then_the_environment_then_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLBRIDGE_TOKEN", raising=False)
    config = parse_config({"server": {"port": 9000, "token": "from-file", "auto_approve": True}})
    settings = settings_from_config(config)
    assert (settings.port, settings.token, settings.auto_approve, settings.host) == (
        9000,
        "from-file",
        True,
        "127.0.0.1",
    )
    monkeypatch.setenv("TOOLBRIDGE_TOKEN", "from-env")
    assert settings_from_config(config).token == "from-env"
    assert settings_from_config(config, token="from-option", port=None).token == "from-option"
    with pytest.raises(ConfigError, match=r"server\.port: .*less than or equal to 65535"):
        settings_from_config(config, port=70000)


def test_an_unset_token_variable_stops_serve_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLBRIDGE_TOKEN", raising=False)
    monkeypatch.delenv("UNSET_TOKEN_XYZ", raising=False)
    config = parse_config({"server": {"token": "${UNSET_TOKEN_XYZ}"}}, path="/home/me/toolbridge.json")
    with pytest.raises(ConfigError) as info:
        settings_from_config(config)
    assert str(info.value).startswith(
        "/home/me/toolbridge.json: server.token: environment variable 'UNSET_TOKEN_XYZ' is not set "
        "(toolbridge serve uses it)"
    )
