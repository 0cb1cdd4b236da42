"""Published MCP servers, installed by scripts/install-test-servers, through toolbridge's connection layer."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from toolbridge.mcp import ServerConnection, ServerPool
from toolbridge.types import ImagePart

pytestmark = [pytest.mark.anyio, pytest.mark.published]


@pytest.mark.slow
async def test_excel_server_writes_a_workbook_and_reads_it_back(published_server, tmp_path: Path) -> None:
    book = str(tmp_path / "report.xlsx")
    rows = [["city", "people"], ["Oslo", 709037], ["Bergen", 291940]]
    async with ServerConnection(published_server("excel-mcp-server", cwd=str(tmp_path))) as excel:
        tools = {tool.name: tool for tool in await excel.list_tools()}
        assert tools["read_range"].annotations.read_only_hint is True
        created = await excel.call_tool("create_workbook", {"path": book, "sheets": ["Data"]}, call_id="c")
        written = await excel.call_tool(
            "write_range", {"path": book, "sheet": "Data", "at": "A1", "rows": rows}, call_id="w"
        )
        read = await excel.call_tool(
            "read_range", {"path": book, "sheet": "Data", "range": "A1:B3"}, call_id="r"
        )

    assert not created.is_error, created.text
    assert not written.is_error, written.text
    assert not read.is_error, read.text
    assert await anyio.Path(book).exists()
    for value in ("city", "Oslo", "709037", "Bergen", "291940"):
        assert value in read.text


async def test_time_server_tells_the_time_in_a_zone_and_rejects_a_bad_zone(published_server) -> None:
    async with ServerConnection(published_server("mcp-server-time")) as time_server:
        tools = {tool.name for tool in await time_server.list_tools()}
        now = await time_server.call_tool("get_current_time", {"timezone": "Europe/Oslo"}, call_id="t")
        bad = await time_server.call_tool("get_current_time", {"timezone": "Mars/Olympus"}, call_id="b")
    assert {"get_current_time", "convert_time"} <= tools
    assert not now.is_error, now.text
    assert json.loads(now.content[0].text)["timezone"] == "Europe/Oslo"  # type: ignore[union-attr]
    assert bad.is_error
    assert "Mars/Olympus" in bad.text


async def test_server_everything_from_npm_answers_with_text_image_and_structured_content(
    published_server,
) -> None:
    async with ServerPool({"everything": published_server("server-everything")}) as pool:
        tools = {tool.name: tool for tool in await pool.list_tools("everything")}
        echo = await pool.call_tool("everything", "echo", {"message": "hi"}, call_id="e")
        total = await pool.call_tool("everything", "get-sum", {"a": 2, "b": 40}, call_id="s")
        image = await pool.call_tool("everything", "get-tiny-image", {}, call_id="i")
        weather = await pool.call_tool(
            "everything", "get-structured-content", {"location": "Chicago"}, call_id="w"
        )

    assert tools["echo"].source == "everything"
    assert "hi" in echo.text
    assert "42" in total.text
    assert any(isinstance(part, ImagePart) for part in image.content)
    assert weather.structured_content is not None
    assert not any(result.is_error for result in (echo, total, image, weather))
