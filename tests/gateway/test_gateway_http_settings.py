"""Where `toolbridge gateway --http` listens and which tokens it takes: the config's `gateway` section,
`$TOOLBRIDGE_TOKEN`, and the command line, in that order."""

from __future__ import annotations

from typing import Any

import pytest

from toolbridge.config import parse_config
from toolbridge.errors import ConfigError
from toolbridge.gateway.http import COMMAND_LINE_TOKEN, HttpSettings


def settings(section: dict[str, Any], **options: Any) -> HttpSettings:
    return HttpSettings.from_config(parse_config({"gateway": section}), **options)


def test_named_tokens_come_with_their_tool_sets_and_the_command_lines_token_may_use_everything() -> None:
    found = settings(
        {"port": 9000, "tokens": {"cursor": {"token": "c", "tools": {"allow": ["echo"]}}}}, token="cli"
    )
    assert found.port == 9000
    assert found.tokens == {"cursor": "c", COMMAND_LINE_TOKEN: "cli"}
    assert found.token_rules["cursor"].tools.allow == ["echo"]
    assert COMMAND_LINE_TOKEN not in found.token_rules


def test_the_environments_token_is_used_unless_the_command_line_gives_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLBRIDGE_TOKEN", "from-env")
    assert settings({}).tokens == {COMMAND_LINE_TOKEN: "from-env"}
    assert settings({}, token="given").tokens == {COMMAND_LINE_TOKEN: "given"}
    monkeypatch.setenv("TOOLBRIDGE_TOKEN", "")  # set but empty: not set
    assert settings({}).tokens == {}


@pytest.mark.parametrize("token", [" ", " padded "])
def test_a_blank_or_padded_token_is_refused(token: str) -> None:
    with pytest.raises(ConfigError, match=r"blank|whitespace"):
        settings({}, token=token)


STRONG = "Vq3xL9-kP2mZ7rT4wY8n"


def test_beyond_this_machine_a_strong_token_is_needed() -> None:
    with pytest.raises(ConfigError, match=r"refusing to listen on 0\.0\.0\.0 without a token"):
        settings({}, host="0.0.0.0").check_bind()
    settings({"tokens": {"ci": {"token": STRONG}}}, host="0.0.0.0").check_bind()
    settings({}, host="::1").check_bind()  # loopback needs none
    settings({"tokens": {"ci": {"token": "t"}}}, host="::1").check_bind()  # nor a long one
    for weak in (
        {"tokens": {"ci": {"token": "t"}}},
        {"tokens": {"ci": {"token": STRONG}, "cd": {"token": "x" * 20}}},
    ):
        with pytest.raises(ConfigError, match=r"token 'c[id]'.*at least 16 characters"):
            settings(weak, host="0.0.0.0").check_bind()
    with pytest.raises(ConfigError, match=r"--token.*at least 16 characters"):
        settings({}, host="0.0.0.0", token="short").check_bind()


def test_accepted_hosts_are_loopback_the_bound_address_and_the_configs() -> None:
    hosts = settings(
        {"allowed_hosts": ["tools.lan"], "tokens": {"ci": {"token": STRONG}}}, host="10.0.0.5", port=81
    )
    assert hosts.accepted_hosts() == {
        f"{name}:81" for name in ("localhost", "127.0.0.1", "[::1]", "10.0.0.5", "tools.lan")
    }


def test_an_unset_variable_in_a_token_stops_the_http_gateway_with_its_name() -> None:
    config = parse_config({"gateway": {"tokens": {"ci": {"token": "${TOOLBRIDGE_TEST_UNSET_TOKEN}"}}}})
    with pytest.raises(ConfigError, match="TOOLBRIDGE_TEST_UNSET_TOKEN"):
        HttpSettings.from_config(config)
