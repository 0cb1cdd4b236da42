"""Where tools come from: a `ToolSource` lists its tools and runs a call of one of them.

An MCP server (`ServerSource`) and Python functions (`FunctionSource`: toolbridge's native tools and a
user's `@tool` functions) are sources. The registry indexes every source's tools under the names the
caller sees; the pipeline (`toolbridge.tools.pipeline`) calls a source with the name the source knows.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

import anyio

from toolbridge.errors import ServerError, ServerTimeoutError, ToolbridgeError, ToolError, UsageError
from toolbridge.mcp import CallOutcome, ServerPool
from toolbridge.tools.function import FunctionTool
from toolbridge.types import NATIVE_SOURCE, ToolCall, ToolErrorKind, ToolResult, ToolSpec

if TYPE_CHECKING:
    from toolbridge.tools.pipeline import CallContext

__all__ = ["NATIVE_CALL_TIMEOUT", "FunctionSource", "ServerSource", "ToolSource", "error_kind"]

NATIVE_CALL_TIMEOUT = 60.0
"""Seconds a Python tool may run when the caller set no timeout."""


class ToolSource(Protocol):
    name: str
    """What tools of this source carry as `ToolSpec.source` (a server's name, `native`)."""

    async def list_tools(self) -> list[ToolSpec]:
        """Its tools, under the names it knows them by. Raises `ToolbridgeError` when it cannot list."""
        ...

    async def call(self, call: ToolCall, context: CallContext) -> CallOutcome:
        """Run `call` (its name as this source knows it, its arguments checked). Never raises for a
        failure a model can correct: that is an error result."""
        ...


class ServerSource:
    """The tools of one configured MCP server, on the pool's kept session."""

    def __init__(self, pool: ServerPool, name: str) -> None:
        self.name = name
        self._pool = pool

    async def list_tools(self) -> list[ToolSpec]:
        return await self._pool.list_tools(self.name)

    async def call(self, call: ToolCall, context: CallContext) -> CallOutcome:
        started = time.perf_counter()
        try:
            return await self._pool.connection(self.name).call_tool_mcp(
                call.name,
                call.arguments,
                call_id=call.id,
                timeout=context.timeout,
                on_progress=context.on_progress,
            )
        except ToolbridgeError as exc:
            duration = time.perf_counter() - started
            return CallOutcome(
                ToolResult.error(call.id, str(exc), kind=error_kind(exc), server=self.name, duration=duration)
            )


class FunctionSource:
    """Python functions as tools (`toolbridge.tools.tool`), run in this process."""

    name = NATIVE_SOURCE

    def __init__(self, tools: Iterable[FunctionTool] = ()) -> None:
        self.tools: dict[str, FunctionTool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: FunctionTool) -> None:
        if tool.spec.name in self.tools:
            raise UsageError(
                f"a native tool named {tool.spec.name!r} is already registered; rename one of them"
            )
        self.tools[tool.spec.name] = tool

    async def list_tools(self) -> list[ToolSpec]:
        return [tool.spec for tool in self.tools.values()]

    async def call(self, call: ToolCall, context: CallContext) -> CallOutcome:
        started = time.perf_counter()
        limit = context.timeout if context.timeout is not None else NATIVE_CALL_TIMEOUT
        with anyio.move_on_after(limit):
            return CallOutcome(await self.tools[call.name].run(call))
        message = (
            f"Tool {call.name!r} timed out after {limit:g} s and was stopped. "
            "Try simpler arguments, or tell the user the tool did not answer in time."
        )
        duration = time.perf_counter() - started
        return CallOutcome(
            ToolResult.error(call.id, message, kind="timeout", server=NATIVE_SOURCE, duration=duration)
        )


def error_kind(error: ToolbridgeError) -> ToolErrorKind:
    """The kind of failed call a raised error stands for, when it becomes a result for the model."""
    if isinstance(error, ToolError):
        return error.kind
    if isinstance(error, ServerTimeoutError):
        return "timeout"
    if isinstance(error, ServerError):
        return "server_unavailable"
    return "server_error"
