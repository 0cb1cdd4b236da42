"""Code mode (`"tool_mode": "code"`): the model writes Python calling the tools of a real MCP server
(tests/servers/basic.py) in pydantic's Monty sandbox; every call from the code goes through the run's
call path (observers, approval); code that runs away is stopped with an error the model reads."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest
from agent_helpers import scripted_agent

from toolbridge.agent import AgentDefinition, ApprovalPolicy
from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.testing import ToolCallSpec, Turn
from toolbridge.tools import CallRecord, Toolbox
from toolbridge.tools.approval import ApprovalRequest
from toolbridge.tools.code_mode import CodeLimits, CodeMode
from toolbridge.types import TextPart, ToolCall, ToolResult, ToolSpec

pytestmark = pytest.mark.anyio

LOOP = "total = 0\nfor i in range(10):\n    total = add(a=total, b=i)\nprint('total', total)\ntotal * 2"


class Recorded:
    """A call observer: the names of the calls the pipeline made."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def call_started(self, record: CallRecord) -> None:
        self.names.append(record.call.name)

    async def call_ended(self, record: CallRecord) -> None:
        pass


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module scope: the MCP server starts once for the module


@pytest.fixture(scope="module")
async def toolbox(stdio_server: Callable[..., ServerConfig]) -> AsyncIterator[Toolbox]:
    async with Toolbox(Config(servers={"basic": stdio_server("basic")}), native=False) as box:
        yield box


def run_code(code: str) -> Turn:
    return Turn.tool_calls(ToolCallSpec("run_code", {"code": code}))


async def test_a_loop_of_ten_calls_answers_in_two_model_requests(toolbox: Toolbox) -> None:
    seen = Recorded()
    toolbox.observers.append(seen)
    definition = AgentDefinition(tool_mode="code", tools={"allow": ["add", "echo"]})
    try:
        turns = [run_code(LOOP), Turn.text("The total is 45.")]
        async with scripted_agent(turns, tools=toolbox, definition=definition) as (agent, server):
            result = await agent.run("Add the numbers below ten.")
    finally:
        toolbox.observers.remove(seen)

    assert result.output == "The total is 45."
    assert len(server.requests) == 2
    first, second = server.requests
    assert first.tool_names == ["run_code"]
    description = first.tools[0]["function"]["description"]
    assert "def add(*, a: int, b: int) -> int" in description
    assert second.last_message["content"] == "total 45\n90"  # printed, then the last expression
    assert seen.names == ["run_code", *["add"] * 10]
    assert [record.call.name for record in result.tool_calls] == [*["add"] * 10, "run_code"]


async def test_in_prompt_mode_the_model_writes_a_python_block(toolbox: Toolbox) -> None:
    definition = AgentDefinition(tool_mode="code", tools={"allow": ["add"]})
    turns = [Turn.text(f"Adding up.\n```python\n{LOOP}\n```"), Turn.text("The total is 45.")]
    async with scripted_agent(turns, tools=toolbox, definition=definition, tool_mode="prompt") as (
        agent,
        server,
    ):
        result = await agent.run("Add the numbers below ten.")

    first, second = server.requests
    assert first.tools == []
    system = first.messages[0]["content"]
    assert "```python" in system
    assert "def add(*, a: int, b: int) -> int" in system
    assert "total 45\n90" in second.last_message["content"]
    assert result.output == "The total is 45."


async def test_an_approval_rule_pauses_the_code_and_a_refusal_raises_in_it(toolbox: Toolbox) -> None:
    asked: list[dict[str, object]] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request.call.arguments)
        return len(asked) < 3  # the third call is declined

    definition = AgentDefinition(
        tool_mode="code", tools={"allow": ["add"]}, approval=ApprovalPolicy(tools={"add": "always"})
    )
    turns = [run_code(LOOP), Turn.text("Stopped at the third.")]
    async with scripted_agent(turns, tools=toolbox, definition=definition, approve=approve) as (
        agent,
        server,
    ):
        await agent.run("Add the numbers below ten.")

    assert asked == [{"a": 0, "b": 0}, {"a": 0, "b": 1}, {"a": 1, "b": 2}]
    reported = server.requests[1].last_message["content"]
    assert reported.startswith("The code failed:")
    assert "line 3" in reported
    assert "declined" in reported


def add_tool() -> ToolSpec:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    return ToolSpec(name="add", description="Add two numbers.", input_schema=schema)


async def answer(call: ToolCall) -> ToolResult:
    return ToolResult(
        call_id=call.id, content=[TextPart(text=str(call.arguments["a"] + call.arguments["b"]))]
    )


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("while True:\n    pass", "TimeoutError"),
        ("held = []\nwhile True:\n    held.append('x' * 100_000)", "MemoryError"),
    ],
    ids=["loops-forever", "allocates-without-bound"],
)
async def test_code_that_runs_away_is_stopped_with_an_error_and_the_next_runs(code: str, error: str) -> None:
    mode = CodeMode([add_tool()], answer, CodeLimits(seconds=0.5, memory_bytes=20_000_000))
    stopped = await mode.tool.run(ToolCall(name="run_code", arguments={"code": code}))
    assert stopped.text.startswith("The code failed:")
    assert error in stopped.text
    after = await mode.tool.run(ToolCall(name="run_code", arguments={"code": "add(a=2, b=3)"}))
    assert after.text == "5"


async def test_the_sandbox_has_no_files_network_or_imports_and_syntax_errors_say_where() -> None:
    mode = CodeMode([add_tool()], answer)

    async def run(code: str) -> str:
        return (await mode.tool.run(ToolCall(name="run_code", arguments={"code": code}))).text

    assert "PermissionError" in await run("open('/etc/passwd').read()")
    assert "not available in this sandbox" in await run("import socket")
    assert "NameError" in await run("undefined_name")
    assert "takes keyword arguments only" in await run("add(1, 2)")
    broken = await run("total = (1 +")
    assert broken.startswith("The code could not run:")
    assert "SyntaxError" in broken
