"""A server whose settings use an unset `${VAR}` is not started; the others are, and the error names
the variable, the key and the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbridge.config import load_config
from toolbridge.errors import ServerStartError
from toolbridge.mcp import ServerPool

pytestmark = pytest.mark.anyio


async def test_a_server_with_an_unset_variable_fails_alone_when_it_is_used(
    stdio_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNSET_TOKEN_XYZ", raising=False)
    server = stdio_server("basic")
    basic = {"command": server.command, "args": server.args}
    document = {
        "mcpServers": {"works": basic, "needs_token": {**basic, "env": {"TOKEN": "${UNSET_TOKEN_XYZ}"}}}
    }
    path = tmp_path / "toolbridge.json"
    path.write_text(json.dumps(document))
    config = load_config(path)  # loading does not stop on the unset variable

    async with ServerPool(config.servers) as pool:
        outcomes = await pool.connect_all()
        result = await pool.call_tool("works", "add", {"a": 2, "b": 3}, call_id="c")
        with pytest.raises(ServerStartError, match="UNSET_TOKEN_XYZ"):
            await pool.call_tool("needs_token", "add", {"a": 2, "b": 3}, call_id="d")
        state = pool.connection("needs_token").state
        last_error = pool.connection("needs_token").last_error

    assert outcomes["works"] is None
    assert result.text == "5"
    failure = outcomes["needs_token"]
    assert isinstance(failure, ServerStartError)
    expected = (
        f"{path}: server 'needs_token': env.TOKEN: environment variable 'UNSET_TOKEN_XYZ' is not set; "
        "set it, or give a default with ${UNSET_TOKEN_XYZ:-value}"
    )
    assert str(failure) == expected
    assert (state, last_error) == ("failed", expected)
