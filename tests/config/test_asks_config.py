"""The keys that say what servers may ask of toolbridge: a server's `sampling` and `roots`, an agent's
`roots`; checked like every other key."""

from __future__ import annotations

import pytest

from toolbridge.config import parse_config
from toolbridge.config.asks import DEFAULT_SAMPLING_RATE_LIMIT
from toolbridge.errors import ConfigError


def test_sampling_and_roots_are_read_per_server_and_roots_per_agent() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "writer": {
                    "command": "w",
                    "sampling": {"model": "fast", "max_tokens": 1024, "approval": "never", "rate_limit": 3},
                    "roots": ["~/notes"],
                },
                "plain": {"command": "p"},
            },
            "agents": {"helper": {"roots": ["/srv/data"]}},
        }
    )
    writer, plain = config.servers["writer"], config.servers["plain"]
    assert (writer.sampling.model, writer.sampling.max_tokens) == ("fast", 1024)
    assert (writer.sampling.approval, writer.sampling.rate_limit) == ("never", 3)
    assert writer.roots == ["~/notes"]
    assert (plain.sampling.approval, plain.sampling.rate_limit) == ("always", DEFAULT_SAMPLING_RATE_LIMIT)
    assert plain.roots is None
    assert config.agents["helper"].roots == ["/srv/data"]


@pytest.mark.parametrize(
    ("entry", "key", "message"),
    [
        ({"sampling": {"modle": "fast"}}, "sampling.modle", "did you mean 'model'?"),
        ({"sampling": {"approval": "sometimes"}}, "sampling.approval", "'always' or 'never'"),
        ({"sampling": {"max_tokens": 0}}, "sampling.max_tokens", "greater than 0"),
        ({"samplng": {}}, "samplng", "did you mean 'sampling'?"),
        ({"roots": "~/notes"}, "roots", "expected a list of strings"),
    ],
)
def test_a_wrong_sampling_or_roots_key_names_itself(entry: dict[str, object], key: str, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config({"mcpServers": {"writer": {"command": "w", **entry}}})
    assert raised.value.key == key
    assert message in str(raised.value)
