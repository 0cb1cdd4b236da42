"""The schema lookup the SDK's `Mcp-Param-*` header check uses (2026-07-28 over HTTP, before every call):
the gateway answers it from the tools already listed, as its `tools/list` would, instead of the SDK
running the whole listing on every call."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from toolbridge.config.model import Config
from toolbridge.gateway import Gateway
from toolbridge.tools import Toolbox
from toolbridge.types import ToolSpec

pytestmark = pytest.mark.anyio


def _not_add(tool: ToolSpec) -> bool:
    return tool.name != "add"


async def test_a_tools_input_schema_is_the_listed_one_without_listing_again(stdio_server: Any) -> None:
    async with Toolbox(Config(servers={"basic": stdio_server("basic")}), native=False) as toolbox:
        gateway = Gateway(toolbox, offers=_not_add)
        async with Client(gateway.server) as client:
            listed = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
        lookup = gateway.server.get_tool_input_schema
        assert lookup is not None
        assert lookup("echo") == listed["echo"]
        assert lookup("add") is None  # not offered: nothing for a header to be checked against
        assert lookup("no_such_tool") is None
