"""Seeds 001 and 002 end to end: the question, the tool, its result in front of the model, the answer.

Native mode: calls as API tool calls. Prompt mode: calls written as `<tool_call>` text, exactly the
way seed 002's model wrote them, followed by the "(waiting for the tool result...)" it added.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import scripted_agent

from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.models import ToolMode
from toolbridge.testing import ToolCallSpec, Turn
from toolbridge.tools import Toolbox

pytestmark = pytest.mark.anyio

ROWS = [["fruit", "kg"], ["apples", 12], ["pears", 7]]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module scope: the excel server starts once for the whole module


@pytest.fixture(scope="module")
async def toolbox(
    published_server: Callable[..., ServerConfig], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Toolbox]:
    folder = tmp_path_factory.mktemp("excel")
    config = Config(servers={"excel": published_server("excel-mcp-server", name="excel", cwd=str(folder))})
    async with Toolbox(config) as box:
        book = str(folder / "myfile.xlsx")
        # The workbook is made with the server's own write tools, outside the agent.
        steps: list[tuple[str, dict[str, Any]]] = [
            ("create_workbook", {"path": book, "sheets": ["Data"]}),
            ("write_range", {"path": book, "sheet": "Data", "at": "A1", "rows": ROWS}),
        ]
        for name, arguments in steps:
            made = await box.call(name, arguments)
            assert not made.is_error, made.text
        yield box


@pytest.fixture(scope="module")
def workbook(toolbox: Toolbox) -> str:
    assert toolbox.config.servers["excel"].cwd is not None
    return str(Path(toolbox.config.servers["excel"].cwd) / "myfile.xlsx")


def calling(mode: ToolMode, call: ToolCallSpec) -> Turn:
    if mode == "native":
        return Turn.tool_calls(call)
    # Seed 002: a sentence, the call as text, then talk the model should never be waited for.
    return Turn.calls_in_text(call, before="Let me use a tool for that.\n").then_text(
        "\n\n(waiting for the tool result...)"
    )


def quoting(results: list[str]) -> Turn:
    return Turn.text("The tool says: " + " ".join(results))


MODES: list[ToolMode] = ["native", "prompt"]


@pytest.mark.parametrize("mode", MODES)
async def test_what_time_is_it_answers_with_the_time_the_tool_returned(
    mode: ToolMode, toolbox: Toolbox
) -> None:
    before = datetime.now().astimezone()
    async with scripted_agent(
        [calling(mode, ToolCallSpec("get_current_time", {}))],
        tools=toolbox,
        tool_mode=mode,
        answer_from_results=quoting,
    ) as (agent, server):
        result = await agent.run("What time is it?")

    assert result.stop_reason == "final_answer"
    [record] = result.tool_calls
    assert record.call.name == "get_current_time"
    assert not record.result.is_error
    told = datetime.fromisoformat(_json(record.result.text)["datetime"])
    assert before - timedelta(seconds=1) <= told <= datetime.now().astimezone()
    assert told.isoformat(timespec="seconds") in result.output
    assert told.isoformat(timespec="seconds") in _result_sent(server.requests[1].messages, mode)
    assert "waiting for the tool result" not in str(server.requests[1].messages)


@pytest.mark.parametrize("mode", MODES)
async def test_arithmetic_goes_through_calculate(mode: ToolMode, toolbox: Toolbox) -> None:
    async with scripted_agent(
        [calling(mode, ToolCallSpec("calculate", {"expression": "15 + 27"}))],
        tools=toolbox,
        tool_mode=mode,
        answer_from_results=quoting,
    ) as (agent, server):
        result = await agent.run("15 + 27")

    assert result.output == "The tool says: 42"
    assert _result_sent(server.requests[1].messages, mode) == "42"
    assert result.steps == 2


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
async def test_what_is_in_myfile_xlsx_quotes_the_cells(
    mode: ToolMode, toolbox: Toolbox, workbook: str
) -> None:
    read = ToolCallSpec("read_range", {"path": workbook, "sheet": "Data", "range": "A1:B3"})
    async with scripted_agent(
        [calling(mode, read)], tools=toolbox, tool_mode=mode, answer_from_results=quoting
    ) as (agent, server):
        result = await agent.run("What is in myfile.xlsx?")

    [record] = result.tool_calls
    assert record.result.server == "excel"
    assert not record.result.is_error, record.result.text
    sent = _result_sent(server.requests[1].messages, mode)
    for cell in ("fruit", "kg", "apples", "12", "pears", "7"):
        assert cell in sent
        assert cell in result.output
    # In prompt mode the model's talk after its call never reaches the transcript.
    assert all("waiting" not in str(message) for message in result.messages)


def _result_sent(messages: list[dict[str, Any]], mode: ToolMode) -> str:
    """The tool result as the model received it in the request after the call."""
    if mode == "native":
        [message] = [m for m in messages if m["role"] == "tool"]
        return str(message["content"])
    last = messages[-1]
    assert last["role"] == "user"
    assert last["content"].startswith("<tool_result name=")
    return str(last["content"]).split(">", 1)[1].rsplit("</tool_result>", 1)[0]


def _json(text: str) -> dict[str, Any]:
    value = json.loads(text)
    assert isinstance(value, dict)
    return value
