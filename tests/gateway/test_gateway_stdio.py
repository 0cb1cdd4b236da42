"""`toolbridge gateway` over stdio, driven by the official SDK client as Claude Desktop would run it (the
first test runs the command; the others the same gateway in this process)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as mcp
import pytest
from _gateway import gateway, gateway_process, our_server
from mcp import Client

from toolbridge.config.model import Config
from toolbridge.gateway import Gateway
from toolbridge.store import Store
from toolbridge.tools import Toolbox

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


def _servers() -> dict[str, dict[str, Any]]:
    return {"basic": our_server("basic")}


async def test_a_client_lists_the_servers_tools_with_their_schemas_and_calls_them(tmp_path: Path) -> None:
    # The command itself, as a client such as Claude Desktop starts it.
    async with Client(gateway_process(tmp_path, _servers())) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert {"echo", "add", "calculate"} <= set(tools)
        assert tools["add"].input_schema["required"] == ["a", "b"]
        assert tools["echo"].annotations is not None
        assert tools["echo"].annotations.read_only_hint
        assert tools["weather"].output_schema is not None

        echoed = await client.call_tool("echo", {"text": "hi there"})
        assert not echoed.is_error
        assert echoed.content == [mcp.TextContent(type="text", text="hi there")]
        weather = await client.call_tool("weather", {"city": "Oslo"})
        assert weather.structured_content is not None
        assert weather.structured_content["city"] == "Oslo"


async def test_bad_arguments_and_unknown_tools_come_back_as_tool_errors_and_are_logged(
    tmp_path: Path,
) -> None:
    async with Client(gateway(tmp_path, _servers())) as client:
        wrong = await client.call_tool("add", {"a": 1})
        assert wrong.is_error
        assert isinstance(wrong.content[0], mcp.TextContent)
        assert "'b'" in wrong.content[0].text
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error
        assert isinstance(unknown.content[0], mcp.TextContent)
        # The pipeline's one wording, as every surface says it: what to call instead.
        assert "Unknown tool 'no_such_tool', so nothing ran" in unknown.content[0].text
        assert "Call one of the available tools" in unknown.content[0].text
        assert not (await client.call_tool("add", {"a": 1, "b": 2})).is_error

    with Store(f"sqlite:///{tmp_path / 'calls.db'}") as store:
        stats = {row.tool: row for row in store.tool_stats()}
    assert stats["add"].calls == 2
    assert stats["add"].failed == 1


async def test_no_native_hides_toolbridges_own_tools_and_refuses_to_call_them(tmp_path: Path) -> None:
    async with Client(gateway(tmp_path, _servers(), native=False)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert "echo" in names
        assert "calculate" not in names
        refused = await client.call_tool("calculate", {"expression": "1 + 1"})
        assert refused.is_error
        assert isinstance(refused.content[0], mcp.TextContent)
        assert "Unknown tool 'calculate'" in refused.content[0].text  # not even loaded


async def test_a_result_over_the_gateways_limit_reaches_the_client_cut_with_a_note(
    tmp_path: Path, stdio_server: Any
) -> None:
    # In-process: what matters is what the gateway passes on, not how.
    big = tmp_path / "big.txt"
    big.write_text("x" * 1_500_000, encoding="utf-8")
    small = tmp_path / "small.txt"
    small.write_text("y" * 1_000, encoding="utf-8")
    config = Config(servers={"files": stdio_server("files"), "basic": stdio_server("basic")})
    async with Toolbox(config, native=False) as toolbox, Client(Gateway(toolbox).server) as client:
        cut = await client.call_tool("read_file", {"path": str(big)})  # the default limit: 1,000,000
        whole = await client.call_tool("read_file", {"path": str(small)})
        async with Client(Gateway(toolbox, max_result_chars=100).server) as strict:
            media = await strict.call_tool("media", {})

    # read_file has an output schema, which a cut result cannot meet: an error result, which the client
    # takes as it is.
    assert cut.is_error
    assert cut.structured_content is None
    [text] = cut.content
    assert isinstance(text, mcp.TextContent)
    kept, note = text.text[:1_000_000], text.text[1_000_000:]
    assert kept == "x" * 1_000_000
    assert note.startswith("\n[Result truncated: ")
    assert note.endswith("If you need the rest, ask the tool for a smaller part.]")
    assert whole.structured_content == {"result": "y" * 1_000}  # within the limit: as the server sent it
    # media has no output schema: what fits of its text (media summarized), and the note.
    assert not media.is_error
    assert media.structured_content is None
    [summary] = media.content
    assert isinstance(summary, mcp.TextContent)
    assert summary.text.startswith("all kinds\n[image image/png, ")
    assert "\n[Result truncated: " in summary.text
