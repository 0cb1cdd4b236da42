"""The built-in `demo` model: a few rules standing in for a language model, so the whole loop can be seen
working on a fresh machine, with no API key and no network.

It is labelled wherever it answers (every reply starts with "[demo model]") and is only used when named.
It goes through the same loop, parser and tools as a real model:

- a time question calls `get_current_time`; arithmetic ("what is 15 + 27?") calls `calculate`; a named
  `.xlsx` file is read with `read_data_from_excel` (the seeds' excel server) or `read_range`
  (excel-mcp-server 2.x), sheet "Sheet1" unless one is named;
- with tools in the request (native mode) it streams `ToolCallDelta`s; without (prompt mode) it writes
  `<tool_call>` text, and only uses tools whose catalog entry (`## name`) is in the system prompt;
- once a result is back (a `ToolMessage`, or a `<tool_result>` block in prompt mode) it answers from it,
  quoting it.
"""

from __future__ import annotations

import functools
import html
import json
import re
import uuid
import zoneinfo
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anyio.lowlevel import checkpoint

from toolbridge.models.base import (
    Finish,
    Model,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
    UsageReport,
    event_stream,
)
from toolbridge.parsing import call_format
from toolbridge.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolMessage,
    ToolModeSetting,
    ToolSpec,
    Usage,
    UserMessage,
    bare_name,
)

__all__ = ["DEMO_LABEL", "DemoModel"]

DEMO_LABEL = "[demo model]"
TIME_TOOL = "get_current_time"
CALCULATE_TOOL = "calculate"
EXCEL_TOOL = "read_data_from_excel"
DEFAULT_SHEET = "Sheet1"
_MAX_QUOTED = 2000
# Zone names that are also words people write capitalized ("Christmas", "North"), and are rarely meant.
_NOT_CITIES = frozenset(
    {"center", "christmas", "easter", "midway", "north", "south", "west", "wake", "troll"}
)
_CONTINENTS = frozenset(
    {"Africa", "America", "Antarctica", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific"}
)

_PATH_PARAMETERS = ("filepath", "path", "file_path", "file", "filename")
_SHEET_PARAMETERS = ("sheet_name", "sheet", "worksheet")
_XLSX = re.compile(r"""([^\s"'`]+\.xlsx)\b""", re.IGNORECASE)
_SHEET = re.compile(r"""\bsheet(?:_name)?\s+["'`]?([\w-]+)|\b(sheet\d+)\b""", re.IGNORECASE)
_TIME = re.compile(r"\b(time|clock|what day|date|today)\b", re.IGNORECASE)
_ZONE = re.compile(r"\b([A-Z][A-Za-z_]+/[A-Z][A-Za-z_]+(?:/[A-Z][A-Za-z_]+)?|UTC)\b")
_OPERATOR_WORDS = (
    (re.compile(r"\bplus\b", re.IGNORECASE), "+"),
    (re.compile(r"\bminus\b", re.IGNORECASE), "-"),
    (re.compile(r"\b(times|multiplied by)\b", re.IGNORECASE), "*"),
    (re.compile(r"\bdivided by\b", re.IGNORECASE), "/"),
    (re.compile(r"\^"), "**"),
)
_EXPRESSION_CHARS = re.compile(r"[-+*/×÷%().\d\s]+")
_HAS_OPERATION = re.compile(r"\d[\d.\s)]*(\*\*|[-+*/×÷%])[\s(]*[\d(.-]")
_CATALOG_ENTRY = re.compile(r"^## (\S+)\s*$", re.MULTILINE)
_RESULT_BLOCK = re.compile(r"<tool_result([^>]*)>(.*?)</tool_result>", re.DOTALL)
_NAME_ATTRIBUTE = re.compile(r'name="([^"]*)"')


@dataclass(frozen=True)
class _Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class _Result:
    name: str
    text: str
    is_error: bool


@dataclass
class _Reply:
    text: str
    native_calls: list[_Call] = field(default_factory=list)

    @property
    def finish(self) -> str:
        return "tool_calls" if self.native_calls else "stop"


class DemoModel(Model):
    """The rule-based stand-in. `chunk_size` is how many characters each streamed piece carries."""

    tool_search = False
    """Its rules pick from the tools it is shown; it cannot search for them."""

    def __init__(
        self, *, name: str = "demo", tool_mode: ToolModeSetting = "auto", chunk_size: int = 4
    ) -> None:
        self.name = name
        self.tool_mode = tool_mode
        self.chunk_size = chunk_size

    def __repr__(self) -> str:
        return f"DemoModel(name={self.name!r}, tool_mode={self.tool_mode!r})"

    def stream(self, request: ModelRequest) -> AbstractAsyncContextManager[AsyncIterator[ModelEvent]]:
        return event_stream(self._events(request))

    async def _events(self, request: ModelRequest) -> AsyncGenerator[ModelEvent]:
        reply = plan_reply(request.messages, request.tools)
        written = reply.text
        for piece in _pieces(reply.text, self.chunk_size):
            await checkpoint()  # a real stream's pace: let cancellation and other tasks in
            yield TextDelta(piece)
        for index, call in enumerate(reply.native_calls):
            yield ToolCallDelta(index=index, id=f"call_demo_{uuid.uuid4().hex[:8]}", name=call.name)
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            written += arguments
            for piece in _pieces(arguments, 2 * self.chunk_size):
                await checkpoint()
                yield ToolCallDelta(index=index, arguments=piece)
        read = sum(len(getattr(message, "content", "")) for message in request.messages)
        yield UsageReport(Usage(input_tokens=read // 4, output_tokens=max(1, len(written) // 4)))
        yield Finish(reply.finish)


def plan_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> _Reply:
    """What the demo says to this conversation: the rules, with no I/O."""
    question, results = _question_and_results(messages)
    if results:
        return _Reply(_answer_from(question, results))
    native = bool(tools)
    offered = {tool.name: tool for tool in tools} if native else {}
    catalog = "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))
    names = list(offered) if native else _CATALOG_ENTRY.findall(catalog)
    call = _call_for(
        question,
        names,
        lambda name: _requires(name, "timezone", offered, catalog),
        lambda name: _parameters(name, offered, catalog),
    )
    if call is None:
        return _Reply(_no_tool_needed(names))
    if call.name not in names:
        return _Reply(
            f"{DEMO_LABEL} That needs the `{call.name}` tool, which is not available here. "
            "I am a rule-based demo, not a language model: I can only answer with the tools I am given."
        )
    intro = f"{DEMO_LABEL} Let me use `{call.name}`.\n"
    if native:
        return _Reply(intro, native_calls=[call])
    return _Reply(intro + call_format("hermes").format_call(call.name, call.arguments))


# -- reading the conversation ---------------------------------------------------------------------------


def _question_and_results(messages: Sequence[Message]) -> tuple[str, list[_Result]]:
    """The latest user question, and the tool results that came back after it (oldest first)."""
    results: list[_Result] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage):
            results.append(_Result(message.name, message.result.text, message.result.is_error))
        elif isinstance(message, UserMessage):
            blocks = _RESULT_BLOCK.findall(message.content)
            for attributes, text in reversed(blocks):
                found = _NAME_ATTRIBUTE.search(attributes)
                name = html.unescape(found.group(1)) if found else ""
                results.append(_Result(name, html.unescape(text), 'error="true"' in attributes))
            remainder = _RESULT_BLOCK.sub("", message.content).strip()
            if remainder:
                return remainder, results[::-1]
        elif isinstance(message, SystemMessage):
            break
        elif isinstance(message, AssistantMessage):
            continue
    return "", results[::-1]


def _parameters(tool_name: str, offered: dict[str, ToolSpec], catalog: str) -> list[str]:
    """The parameter names of a tool: from its schema (native mode) or its catalog entry (prompt mode)."""
    if tool_name in offered:
        return list(offered[tool_name].input_schema.get("properties", {}))
    entry = re.search(rf"^## {re.escape(tool_name)}\s*$(.*?)(?=^## |\Z)", catalog, re.MULTILINE | re.DOTALL)
    return re.findall(r"^- (\w+) \(", entry.group(1), re.MULTILINE) if entry else []


def _requires(tool_name: str, parameter: str, offered: dict[str, ToolSpec], catalog: str) -> bool:
    if tool_name in offered:
        return parameter in offered[tool_name].input_schema.get("required", [])
    entry = re.search(rf"^## {re.escape(tool_name)}\s*$(.*?)(?=^## |\Z)", catalog, re.MULTILINE | re.DOTALL)
    return bool(entry and re.search(rf"^- {parameter} \([^)]*required", entry.group(1), re.MULTILINE))


# -- the rules ---------------------------------------------------------------------------------------


def _call_for(
    question: str,
    names: list[str],
    requires_timezone: Callable[[str], bool],
    parameters_of: Callable[[str], list[str]],
) -> _Call | None:
    if match := _XLSX.search(question):
        path = Path(match.group(1).strip(".,;:!?")).expanduser()
        # excel-mcp-server over stdio wants an absolute path; the user means one relative to here.
        filepath = str(path if path.is_absolute() else Path.cwd() / path)
        sheet = _SHEET.search(question.replace(match.group(1), ""))
        sheet_name = (sheet.group(1) or sheet.group(2)) if sheet else DEFAULT_SHEET
        tool = _excel_tool(names)
        parameters = parameters_of(tool)
        path_key = next((p for p in _PATH_PARAMETERS if p in parameters), _PATH_PARAMETERS[0])
        sheet_key = next((p for p in _SHEET_PARAMETERS if p in parameters), _SHEET_PARAMETERS[0])
        return _Call(tool, {path_key: filepath, sheet_key: sheet_name})
    if expression := extract_expression(question):
        return _Call(_exposed(CALCULATE_TOOL, names), {"expression": expression})
    if _TIME.search(question):
        tool = _exposed(TIME_TOOL, names)
        zone = zone_in(question)
        if zone:
            return _Call(tool, {"timezone": zone})
        return _Call(tool, {"timezone": "UTC"} if requires_timezone(tool) else {})
    return None


def _exposed(wanted: str, names: list[str]) -> str:
    """The name `wanted` is offered under: itself, or `source__wanted` when several sources have it.

    The first such name wins: the registry lists MCP servers before native tools.
    """
    if wanted in names:
        return wanted
    return next((name for name in names if bare_name(name) == wanted), wanted)


def zone_in(question: str) -> str | None:
    """The IANA time zone a question names: written as such ("Asia/Tokyo", "UTC"), or by its city."""
    if written := _ZONE.search(question):
        return written.group(1)
    words = re.findall(r"[A-Za-z]+", question)
    cities = _zones_by_city()
    for length in (3, 2, 1):  # "Ho Chi Minh" before "Minh", "New York" before "York"
        for start in range(len(words) - length + 1):
            named = words[start : start + length]
            if all(word[0].isupper() for word in named):  # a city is a proper noun: "Tokyo", not "west"
                found = cities.get(" ".join(named).lower())
                if found:
                    return found
    return None


@functools.cache
def _zones_by_city() -> dict[str, str]:
    """ "tokyo" -> "Asia/Tokyo", "new york" -> "America/New_York": the last part of each IANA name."""
    cities: dict[str, str] = {}
    for zone in sorted(zoneinfo.available_timezones()):
        area, _, city = zone.rpartition("/")
        if area.split("/")[0] in _CONTINENTS and not city.isupper() and city.lower() not in _NOT_CITIES:
            cities.setdefault(city.replace("_", " ").lower(), zone)
    return cities


def _excel_tool(names: list[str]) -> str:
    # The seed's tool first, then excel-mcp-server 2.x's `read_range`, then anything that reads sheets.
    for known in (EXCEL_TOOL, "read_range"):
        if any(bare_name(name) == known for name in names):
            return _exposed(known, names)
    readers = [n for n in names if "read" in n.lower() and re.search(r"excel|xlsx|sheet|workbook", n, re.I)]
    return readers[0] if readers else EXCEL_TOOL


def extract_expression(question: str) -> str | None:
    """The arithmetic in a question ("what is 15 + 27?" -> "15 + 27"), or None if there is none."""
    text = question
    for pattern, symbol in _OPERATOR_WORDS:
        text = pattern.sub(symbol, text)
    candidates = [c.strip().rstrip(".( ").lstrip(") ") for c in _EXPRESSION_CHARS.findall(text)]
    candidates = [c.strip() for c in candidates if _HAS_OPERATION.search(c)]
    return max(candidates, key=len) if candidates else None


# -- answering -----------------------------------------------------------------------------------------


def _answer_from(question: str, results: list[_Result]) -> str:
    lines = []
    for result in results:
        text = _quoted(result.text)
        if result.is_error:
            lines.append(f"The `{result.name or 'tool'}` call failed: {text}")
        elif bare_name(result.name) == CALCULATE_TOOL:
            expression = extract_expression(question)
            lines.append(f"{expression} = {text}" if expression else f"`{result.name}` says: {text}")
        elif bare_name(result.name) == TIME_TOOL:
            lines.append(f"`{result.name}` says the current time is: {text}")
        elif (match := _XLSX.search(question)) is not None:
            lines.append(f"Here is what {match.group(1)} contains, as `{result.name}` read it:\n{text}")
        else:
            lines.append(f"`{result.name}` returned:\n{text}")
    return f"{DEMO_LABEL} " + "\n\n".join(lines)


def _no_tool_needed(names: list[str]) -> str:
    tools = f" (tools here: {', '.join(names)})" if names else " (no tools are offered right now)"
    return (
        f"{DEMO_LABEL} Hello! I am toolbridge's built-in demo: a few rules, not a language model{tools}. "
        'Ask me the time, some arithmetic ("what is 15 + 27?") or what is in an .xlsx file, and I will '
        "answer with a tool. For real answers, configure a model (a `models` section in toolbridge.json, "
        "or `--model openai:gpt-4o-mini`, `--model ollama:qwen3`)."
    )


def _quoted(text: str) -> str:
    text = text.strip()
    if len(text) > _MAX_QUOTED:
        return f"{text[:_MAX_QUOTED]}… ({len(text) - _MAX_QUOTED} more characters)"
    return text


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
