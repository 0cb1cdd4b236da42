"""Agents for the loop tests.

`agent_for(model, ...)` puts an in-process model (a `FunctionModel`) in an agent: most tests test the
loop, not the wire. `scripted_agent(turns, ...)` starts a `ScriptedModelServer` serving `turns`, points an
`OpenAIChatModel` at it and yields `(agent, server)`, for what needs the real client and HTTP (a stream
closed on the wire, an endpoint rejecting tools, the seeds end to end); leaving the block checks the
script was consumed exactly.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio

from toolbridge.agent import Agent, AgentDefinition, Approver
from toolbridge.models import Model, ModelEvent, ModelRequest, OpenAIChatModel, ToolModeSetting
from toolbridge.parsing import call_format
from toolbridge.testing import RecordedRequest, ScriptedModelServer, Turn
from toolbridge.tools import FunctionTool, Toolbox, ToolRegistry, native_tools
from toolbridge.types import ToolAnnotations, ToolCall, ToolMessage, ToolResult, UserMessage

HERMES = call_format("hermes")


def agent_for(
    model: Model,
    *,
    tools: Toolbox | ToolRegistry | Iterable[FunctionTool] | None = None,
    definition: AgentDefinition | None = None,
    approve: Approver | None = None,
) -> Agent:
    """An agent with `model`, the native tools plus `tools` (function tools) or a toolbox/registry."""
    if tools is not None and not isinstance(tools, Toolbox | ToolRegistry):
        tools = ToolRegistry(native=[*native_tools(), *tools])
    return Agent(model, tools, definition, approve=approve)


def results_sent(request: ModelRequest) -> list[ToolResult]:
    """The tool results a (native-mode) request ends with."""
    results: list[ToolResult] = []
    for message in reversed(request.messages):
        if not isinstance(message, ToolMessage):
            break
        results.insert(0, message.result)
    return results


def calculate(expression: str) -> ToolCall:
    return ToolCall(name="calculate", arguments={"expression": expression})


def in_text(*calls: ToolCall, before: str = "") -> str:
    """Calls written as text, the way a prompt-mode model writes them (hermes)."""
    return before + "\n".join(HERMES.format_call(call.name, call.arguments) for call in calls)


@asynccontextmanager
async def scripted_agent(
    turns: Iterable[Turn],
    *,
    tools: Toolbox | ToolRegistry | Iterable[FunctionTool] | None = None,
    definition: AgentDefinition | None = None,
    tool_mode: ToolModeSetting = "native",
    approve: Approver | None = None,
    answer_from_results: Callable[[list[str]], Turn] | None = None,
) -> AsyncIterator[tuple[Agent, ScriptedModelServer]]:
    """`answer_from_results`: script each answer from the tool results the request carries."""
    if tools is not None and not isinstance(tools, Toolbox | ToolRegistry):
        tools = ToolRegistry(native=[*native_tools(), *tools])
    async with ScriptedModelServer(turns) as server:
        adapter = OpenAIChatModel(
            "scripted-model", base_url=server.base_url, api_key="test", max_retries=0, tool_mode=tool_mode
        )
        model: Model = adapter
        if answer_from_results is not None:
            model = AnswersFromResults(adapter, server, answer_from_results)
        try:
            yield Agent(model, tools, definition, approve=approve), server
        finally:
            await adapter.aclose()


# -- reading what the scripted server received ----------------------------------------------------------


def tool_messages(request: RecordedRequest) -> list[dict[str, Any]]:
    return [m for m in request.messages if m["role"] == "tool"]


def last_user_text(request: RecordedRequest) -> str:
    users = [m for m in request.messages if m["role"] == "user"]
    return str(users[-1]["content"]) if users else ""


# -- test tools ------------------------------------------------------------------------------------------


class CallLog:
    """Which recording tools ran, and whether each saw all of its peers start while it was running."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.saw_peers: dict[str, bool] = {}
        self.both_started = anyio.Event()


def overlapping_tools(log: CallLog, expected: int = 2) -> FunctionTool:
    """`wait_for_peers(tag)`: records its start, then waits (bounded) until `expected` calls have started.

    Run one after the other, the first call could never see the second start: it would give up waiting
    and record that it did not see its peers. Run concurrently, every call sees all the others start.
    """

    async def wait_for_peers(tag: str) -> str:
        """Wait until the other calls have started too.

        Args:
            tag: A name for this call.
        """
        log.started.append(tag)
        if len(log.started) >= expected:
            log.both_started.set()
        with anyio.move_on_after(5):
            await log.both_started.wait()
        log.saw_peers[tag] = log.both_started.is_set()
        return f"{tag} done"

    return FunctionTool.from_function(wait_for_peers)


def destructive_tool(deleted: list[str]) -> FunctionTool:
    def delete_file(path: str) -> str:
        """Delete a file.

        Args:
            path: The file to delete.
        """
        deleted.append(path)
        return f"deleted {path}"

    return FunctionTool.from_function(delete_file, annotations=ToolAnnotations(destructive_hint=True))


# -- a model that reads its tool results ---------------------------------------------------------------

_RESULT_BLOCK = re.compile(r"<tool_result [^>]*>(.*?)</tool_result>", re.DOTALL)


def last_tool_results(request: ModelRequest) -> list[str]:
    """The tool results a request ends with, in either tool mode (tool messages or `<tool_result>` blocks)."""
    results: list[str] = []
    for message in reversed(request.messages):
        if isinstance(message, ToolMessage):
            results.insert(0, message.result.text)
            continue
        if isinstance(message, UserMessage) and not results:
            results = _RESULT_BLOCK.findall(message.content)
        break
    return results


class AnswersFromResults(Model):
    """The scripted model, plus a reader: before each request that ends with tool results, it scripts
    the next turn as an answer quoting them (through `answer(results)`), as a model that read them would.

    The request still goes through the real adapter and HTTP; only the choice of words is scripted late,
    so tests can check that what a tool returned (a time, a workbook's cells) reached the model.
    """

    def __init__(
        self, inner: Model, server: ScriptedModelServer, answer: Callable[[list[str]], Turn]
    ) -> None:
        self.inner = inner
        self.server = server
        self.answer = answer
        self.name = inner.name

    @property
    def tool_mode(self) -> ToolModeSetting:
        return self.inner.tool_mode

    @tool_mode.setter
    def tool_mode(self, mode: ToolModeSetting) -> None:
        self.inner.tool_mode = mode

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        if results := last_tool_results(request):
            self.server.add(self.answer(results))
        return self.inner.stream(request)
