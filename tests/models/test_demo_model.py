"""The `demo` model's rules, in native mode (tools in the request) and prompt mode (tools in the prompt).

In prompt mode its calls are parsed with toolbridge's own parser, as the loop would parse them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolbridge.models import (
    DemoModel,
    Finish,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from toolbridge.models.demo import extract_expression
from toolbridge.parsing import call_format, parse
from toolbridge.prompting import build_system_prompt
from toolbridge.tools.native import native_tools
from toolbridge.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
)

pytestmark = pytest.mark.anyio

NATIVE_TOOLS = [tool.spec for tool in native_tools()]  # get_current_time, calculate
READ_EXCEL = ToolSpec(
    name="read_data_from_excel",
    description="Read data from an Excel worksheet.",
    input_schema={
        "type": "object",
        "properties": {"filepath": {"type": "string"}, "sheet_name": {"type": "string"}},
        "required": ["filepath", "sheet_name"],
    },
    source="excel",
)
TIME_SERVER_TOOL = ToolSpec(  # mcp-server-time's: the time zone is required
    name="get_current_time",
    input_schema={"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"]},
)


async def reply(messages: list[Message], tools: list[ToolSpec] | None = None) -> list[ModelEvent]:
    async with DemoModel().stream(ModelRequest(messages, tools=tools or [])) as events:
        return [event async for event in events]


def text(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def native_call(events: list[ModelEvent]) -> tuple[str, dict[str, object]]:
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert {d.index for d in deltas} == {0}
    name = next(d.name for d in deltas if d.name)
    assert deltas[0].id
    return name, json.loads("".join(d.arguments for d in deltas))


def prompt_mode_system(tools: list[ToolSpec]) -> SystemMessage:
    return SystemMessage(
        content=build_system_prompt(None, tools, tool_mode="prompt", dialect=call_format("hermes"))
    )


# -- native mode ---------------------------------------------------------------------------------------


async def test_a_time_question_calls_get_current_time_natively() -> None:
    events = await reply([UserMessage(content="What time is it?")], NATIVE_TOOLS)
    assert native_call(events) == ("get_current_time", {})  # the zone is optional: local time
    assert text(events).startswith("[demo model]")
    assert isinstance(events[-2], UsageReport)
    assert events[-1] == Finish("tool_calls")


async def test_a_named_zone_or_a_required_one_is_passed() -> None:
    events = await reply([UserMessage(content="What time is it in Europe/Paris?")], NATIVE_TOOLS)
    assert native_call(events) == ("get_current_time", {"timezone": "Europe/Paris"})
    events = await reply([UserMessage(content="What's the time?")], [TIME_SERVER_TOOL])
    assert native_call(events) == ("get_current_time", {"timezone": "UTC"})


@pytest.mark.parametrize(
    ("question", "zone"),
    [
        ("What time is it in Tokyo?", "Asia/Tokyo"),
        ("What's the time in New York right now?", "America/New_York"),
        ("Time in Ho Chi Minh?", "Asia/Ho_Chi_Minh"),
        ("What time is it in UTC?", "UTC"),
    ],
)
async def test_a_city_in_the_question_becomes_its_time_zone(question: str, zone: str) -> None:
    events = await reply([UserMessage(content=question)], NATIVE_TOOLS)
    assert native_call(events) == ("get_current_time", {"timezone": zone})


async def test_words_that_are_also_zone_names_are_not_taken_for_cities() -> None:
    events = await reply([UserMessage(content="Wake me: what time is it out west?")], NATIVE_TOOLS)
    assert native_call(events) == ("get_current_time", {})


async def test_a_tool_several_sources_share_is_called_by_its_qualified_name() -> None:
    # A time server next to the native tools: the registry exposes both under `source__name`.
    server = TIME_SERVER_TOOL.model_copy(update={"name": "time__get_current_time", "source": "time"})
    native = [t.model_copy(update={"name": f"native__{t.name}"}) for t in NATIVE_TOOLS]
    events = await reply([UserMessage(content="What time is it in Tokyo?")], [server, *native])
    assert native_call(events) == ("time__get_current_time", {"timezone": "Asia/Tokyo"})
    events = await reply([UserMessage(content="What is 2 * 21?")], [server, *native])
    assert native_call(events) == ("native__calculate", {"expression": "2 * 21"})

    call = ToolCall(id="c", name="native__calculate", arguments={"expression": "2 * 21"})
    done = ToolMessage(
        name="native__calculate", result=ToolResult(call_id="c", content=[TextPart(text="42")])
    )
    question = UserMessage(content="What is 2 * 21?")
    answer = text(await reply([question, AssistantMessage(tool_calls=[call]), done], [server, *native]))
    assert answer == "[demo model] 2 * 21 = 42"


async def test_arithmetic_calls_calculate_then_answers_from_the_result() -> None:
    question = UserMessage(content="What is 15 + 27?")
    events = await reply([question], NATIVE_TOOLS)
    assert native_call(events) == ("calculate", {"expression": "15 + 27"})

    call = ToolCall(id="call_1", name="calculate", arguments={"expression": "15 + 27"})
    result = ToolResult(call_id="call_1", content=[TextPart(text="42")])
    events = await reply(
        [question, AssistantMessage(tool_calls=[call]), ToolMessage(name="calculate", result=result)],
        NATIVE_TOOLS,
    )
    assert text(events) == "[demo model] 15 + 27 = 42"
    assert not any(isinstance(e, ToolCallDelta) for e in events)
    assert events[-1] == Finish("stop")


async def test_a_named_workbook_is_read_with_the_excel_tool_and_quoted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    question = UserMessage(content="What is in data/myfile.xlsx?")
    events = await reply([question], [*NATIVE_TOOLS, READ_EXCEL])
    arguments = {"filepath": str(tmp_path / "data" / "myfile.xlsx"), "sheet_name": "Sheet1"}
    assert native_call(events) == ("read_data_from_excel", arguments)

    cells = '{"A1": "Name", "B1": "Total", "A2": "Ada", "B2": 42}'
    call = ToolCall(id="call_x", name="read_data_from_excel", arguments=arguments)
    result = ToolMessage(
        name="read_data_from_excel", result=ToolResult(call_id="call_x", content=[TextPart(text=cells)])
    )
    answer = text(await reply([question, AssistantMessage(tool_calls=[call]), result], [READ_EXCEL]))
    assert answer.startswith("[demo model] Here is what data/myfile.xlsx contains")
    assert cells in answer


async def test_a_named_sheet_and_an_absolute_path_are_kept() -> None:
    events = await reply([UserMessage(content="Show sheet Sales of /srv/report.xlsx")], [READ_EXCEL])
    assert native_call(events)[1] == {"filepath": "/srv/report.xlsx", "sheet_name": "Sales"}


async def test_a_failed_call_is_reported_not_retried() -> None:
    question = UserMessage(content="what is 1 / 0")
    call = ToolCall(id="c", name="calculate", arguments={"expression": "1 / 0"})
    failed = ToolMessage(
        name="calculate", result=ToolResult.error("c", "Division by zero.", kind="server_error")
    )
    events = await reply([question, AssistantMessage(tool_calls=[call]), failed], NATIVE_TOOLS)
    assert text(events) == "[demo model] The `calculate` call failed: Division by zero."


async def test_plain_chat_says_what_it_is_and_streams_in_small_pieces() -> None:
    events = await reply([UserMessage(content="Hello there")], NATIVE_TOOLS)
    pieces = [e.text for e in events if isinstance(e, TextDelta)]
    assert len(pieces) > 10
    assert all(len(piece) <= 4 for piece in pieces)
    answer = "".join(pieces)
    assert answer.startswith("[demo model]")
    assert "not a language model" in answer
    assert events[-1] == Finish("stop")


async def test_a_tool_that_is_not_offered_is_never_called() -> None:
    events = await reply([UserMessage(content="What time is it?")], [READ_EXCEL])
    assert not any(isinstance(e, ToolCallDelta) for e in events)
    assert "`get_current_time` tool, which is not available" in text(events)


# -- prompt mode -----------------------------------------------------------------------------------------


async def test_in_prompt_mode_calls_are_written_as_text_our_parser_reads() -> None:
    system = prompt_mode_system(NATIVE_TOOLS)
    events = await reply([system, UserMessage(content="15 + 27")])
    assert not any(isinstance(e, ToolCallDelta) for e in events)
    parsed = parse(text(events))
    assert [(c.name, c.arguments) for c in parsed.tool_calls] == [("calculate", {"expression": "15 + 27"})]
    assert parsed.content.startswith("[demo model]")
    assert events[-1] == Finish("stop")


async def test_in_prompt_mode_a_required_zone_is_read_from_the_catalog() -> None:
    events = await reply([prompt_mode_system([TIME_SERVER_TOOL]), UserMessage(content="What time is it?")])
    call = parse(text(events)).tool_calls[0]
    assert (call.name, call.arguments) == ("get_current_time", {"timezone": "UTC"})


async def test_in_prompt_mode_results_in_tool_result_blocks_are_answered() -> None:
    system = prompt_mode_system(NATIVE_TOOLS)
    question = UserMessage(content="What time is it?")
    written = AssistantMessage(content='<tool_call>{"name": "get_current_time", "arguments": {}}</tool_call>')
    result = UserMessage(
        content='<tool_result name="get_current_time" id="call_1">{"datetime": "2025-01-31T09:30:00+00:00"}</tool_result>'
    )
    answer = text(await reply([system, question, written, result]))
    assert (
        answer
        == '[demo model] `get_current_time` says the current time is: {"datetime": "2025-01-31T09:30:00+00:00"}'
    )


async def test_in_prompt_mode_only_tools_in_the_system_prompt_are_used() -> None:
    events = await reply([prompt_mode_system([READ_EXCEL]), UserMessage(content="what is 2 * 21?")])
    assert "<tool_call>" not in text(events)
    assert "`calculate` tool, which is not available" in text(events)


async def test_a_new_question_after_an_answer_starts_over() -> None:
    system = prompt_mode_system(NATIVE_TOOLS)
    history: list[Message] = [
        system,
        UserMessage(content="What is 15 + 27?"),
        AssistantMessage(
            content='<tool_call>{"name": "calculate", "arguments": {"expression": "15 + 27"}}</tool_call>'
        ),
        UserMessage(content='<tool_result name="calculate" id="c1">42</tool_result>'),
        AssistantMessage(content="[demo model] 15 + 27 = 42"),
        UserMessage(content="And what is 6 * 7?"),
    ]
    call = parse(text(await reply(history))).tool_calls[0]
    assert call.arguments == {"expression": "6 * 7"}


@pytest.mark.parametrize(
    ("question", "expression"),
    [
        ("what is 15 + 27?", "15 + 27"),
        ("15 + 27", "15 + 27"),
        ("What is (15 + 27) * 2?", "(15 + 27) * 2"),
        ("what is 12 times 3", "12 * 3"),
        ("2^10", "2**10"),
        ("What is 7 divided by 2.", "7 / 2"),
        ("hello", None),
        ("What time is it?", None),
        ("I have 3 cats", None),
    ],
)
def test_the_arithmetic_is_extracted_from_the_question(question: str, expression: str | None) -> None:
    assert extract_expression(question) == expression
