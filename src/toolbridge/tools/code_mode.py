"""Code mode: the model is offered one tool, `run_code`, and writes Python that calls the other tools as
plain functions (docs/code-mode.md).

    total = 0
    for i in range(10):
        total = add(a=total, b=i)
    print(total)

The code runs in pydantic's Monty sandbox (`pydantic-monty`, the `code` extra): a worker process with no
filesystem, network or imports beyond its own safe set, stopped past `CodeLimits`. A tool call from the
code suspends it; the host makes the call through `call_tool` (for an agent run, the run's call path:
approval, validation, cache, call log, spans) and resumes it with the tool's value: its structured
content when the tool declares an output schema (`{"result": value}` unwrapped to the value), else its
text; a failed call raises `ToolCallFailed` in the code. What the code prints and the value of its last
expression are the result the model sees; an error in the code comes back as its traceback.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolbridge._extras import require
from toolbridge.tools.function import FunctionTool
from toolbridge.types import ToolCall, ToolResult, ToolSpec

__all__ = ["CODE_TOOL_NAME", "CodeLimits", "CodeMode", "python_name"]

CODE_TOOL_NAME = "run_code"
MAX_OUTPUT_CHARS = 20_000
"""What the code prints beyond this is left out (the agent's own result limit applies after)."""

CallTool = Callable[[ToolCall], Awaitable[ToolResult]]
_NOT_IDENTIFIER = re.compile(r"\W")


@dataclass(frozen=True)
class CodeLimits:
    """How far one `run_code` may go before the sandbox stops it (with an error the model reads)."""

    seconds: float = 10.0
    """Time spent running the code, not counting the tool calls it waits on."""
    memory_bytes: int = 100_000_000
    tool_calls: int = 200


def python_name(tool: str) -> str:
    """The function a tool is called by in code: its exposed name, with what Python does not allow in a
    name (`get-sum`) written as `_`."""
    name = _NOT_IDENTIFIER.sub("_", tool)
    if not name or name[0].isdigit() or keyword.iskeyword(name):
        name = f"tool_{name}"
    return name


class ToolCallFailed(Exception):
    """Raised in the sandboxed code when a tool call fails (its message is the tool's error)."""


class CodeMode:
    """One run's `run_code`: the tools it may call, how a call is made, and the sandbox's limits."""

    def __init__(
        self, tools: Sequence[ToolSpec], call_tool: CallTool, limits: CodeLimits = CodeLimits()
    ) -> None:
        require("pydantic_monty", "code", 'code mode ("tool_mode": "code")')
        self._tools = {python_name(tool.name): tool for tool in tools}
        self._call_tool = call_tool
        self._limits = limits
        self._calls = 0
        self.tool = FunctionTool.from_function(
            self._run_code, name=CODE_TOOL_NAME, description=self._description()
        )

    def _description(self) -> str:
        stubs = "\n".join(_stub(name, tool) for name, tool in self._tools.items())
        return (
            "Run Python code (a sandbox: no files, network or imports) that calls the tools below as "
            "functions, with keyword arguments; each returns the tool's result. Use it for several calls at "
            "once, loops and computing with results. What the code prints and its last expression's value "
            "come back. A failed tool call raises an exception with its error.\n\n" + stubs
        )

    async def _run_code(self, code: str) -> str:
        """Run Python code that calls the tools as functions.

        Args:
            code: The Python code to run.
        """
        import pydantic_monty as monty

        limits = monty.ResourceLimits(
            max_feed_duration_secs=self._limits.seconds,
            max_memory=self._limits.memory_bytes,
            max_suspensions=self._limits.tool_calls,
        )
        printed = monty.CollectString(max_bytes=MAX_OUTPUT_CHARS)
        pool = monty.AsyncMonty(min_processes=1, max_processes=1)
        async with pool, pool.checkout(limits=limits) as session:
            try:
                snapshot = await session.feed_start(
                    code, print_callback=printed, external_lookup=dict.fromkeys(self._tools)
                )
                while not isinstance(snapshot, monty.MontyComplete):
                    snapshot = await self._answer(snapshot, monty)
            except monty.MontySyntaxError as error:
                return f"The code could not run:\n{error.display()}"
            except monty.MontyRuntimeError as error:
                return _with_output(printed.output, f"The code failed:\n{error.display()}")
            except monty.MontyCrashedError as error:
                why = "it ran out of time" if error.timed_out else "its sandbox stopped"
                return _with_output(printed.output, f"The code was stopped: {why}.")
        value = snapshot.output
        return _with_output(printed.output, "" if value is None else _shown(value))

    async def _answer(self, snapshot: Any, monty: Any) -> Any:
        """Resume the code past what it waits on: a tool call, or something the sandbox does not give."""
        if isinstance(snapshot, monty.AsyncFunctionSnapshot) and not snapshot.is_os_function:
            name = str(snapshot.function_name)
            if name in self._tools:
                return await snapshot.resume(await self._call(name, snapshot.args, snapshot.kwargs))
        if isinstance(snapshot, monty.AsyncNameLookupSnapshot):
            return await snapshot.resume()  # an unknown name: NameError in the code
        if isinstance(snapshot, monty.AsyncFunctionSnapshot):
            what = snapshot.function_name
            error = PermissionError(f"{what} is not available in this sandbox (no files, network or imports)")
            return await snapshot.resume({"exception": error})
        raise TypeError(f"the sandbox stopped for something code mode does not handle: {snapshot!r}")

    async def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        tool = self._tools[name]
        if args:
            error = TypeError(
                f"{name}() takes keyword arguments only, as the tool's parameters: {name}(a=..., ...)"
            )
            return {"exception": error}
        result = await self._call_tool(ToolCall(name=tool.name, arguments=kwargs))
        if result.is_error:
            return {"exception": ToolCallFailed(result.text)}
        return {"return_value": _value_of(tool, result)}


def _value_of(tool: ToolSpec, result: ToolResult) -> Any:
    structured = result.structured_content
    if structured is not None and tool.output_schema is not None:
        # The SDK's servers wrap a plain return value as {"result": value}.
        if set(structured) == {"result"}:
            return structured["result"]
        return structured
    return result.text


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _with_output(printed: str, last: str) -> str:
    return "\n".join(part for part in (printed.rstrip("\n"), last) if part) or "(no output)"


def _stub(name: str, tool: ToolSpec) -> str:
    """`def name(a: int, b: str = ...) -> int: "description"`: a tool as the code calls it."""
    schema = tool.input_schema
    properties: dict[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    ordered = sorted(properties, key=lambda key: key not in required)
    parameters = ", ".join(
        f"{python_name(key)}: {_python_type(properties[key])}{'' if key in required else ' = ...'}"
        for key in ordered
    )
    returns = _python_type(_unwrapped(tool.output_schema)) if tool.output_schema else "str"
    description = " ".join(tool.description.split())[:200]
    return f"def {name}({'*, ' if parameters else ''}{parameters}) -> {returns}: {json.dumps(description)}"


def _unwrapped(schema: dict[str, Any]) -> Any:
    properties = schema.get("properties")
    if isinstance(properties, dict) and set(properties) == {"result"}:
        return properties["result"]
    return schema


_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "array": "list",
    "object": "dict",
}


def _python_type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "Any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_TYPES.get(str(k), "None" if k == "null" else "Any") for k in kind)
    if isinstance(kind, str):
        return _TYPES.get(kind, "None" if kind == "null" else "Any")
    return "Any"
