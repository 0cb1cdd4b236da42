"""What the gateway's clients learn from a failed request: the upstream server's own error code and
`data` (the URI not found, the capability needed), under toolbridge's message naming the server; and,
for a resource no server has, the `data.uri` MCP's not-found error carries (SEP-2164)."""

from __future__ import annotations

from pathlib import Path

import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client, MCPError

from toolbridge.errors import ServerError
from toolbridge.gateway._upstream import upstream_error

pytestmark = pytest.mark.anyio


async def test_a_resource_no_server_has_is_named_in_the_error_data(tmp_path: Path) -> None:
    async with Client(gateway(tmp_path, {"library": our_server("library")})) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource("nowhere://at-all")
    assert refused.value.error.code == mcp.INVALID_PARAMS
    assert refused.value.error.data == {"uri": "nowhere://at-all"}


def test_an_upstream_error_keeps_its_code_and_data() -> None:
    cause = MCPError(-32021, "needs sampling", {"requiredCapabilities": {"sampling": {}}})
    try:
        raise ServerError("Server 'everything' failed to run the tool", server="everything") from cause
    except ServerError as exc:
        passed_on = upstream_error(exc)
    assert passed_on.error.code == -32021
    assert passed_on.error.data == {"requiredCapabilities": {"sampling": {}}}
    assert "everything" in passed_on.error.message
