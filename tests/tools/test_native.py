"""The built-in tools, called the way the registry calls them: through `FunctionTool.run`."""

from __future__ import annotations

import zoneinfo
from datetime import datetime, timedelta
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from toolbridge.tools.function import FunctionTool
from toolbridge.tools.native import native_tools
from toolbridge.types import NATIVE_SOURCE, ToolCall, ToolResult

TOOLS = {t.spec.name: t for t in native_tools()}


async def call(name: str, **arguments: Any) -> ToolResult:
    return await TOOLS[name].run(ToolCall(name=name, arguments=arguments))


def test_native_tools_are_function_tools_with_full_specs() -> None:
    assert list(TOOLS) == ["get_current_time", "calculate"]
    for native in TOOLS.values():
        assert isinstance(native, FunctionTool)
        assert native.spec.source == NATIVE_SOURCE
        assert native.spec.description
        assert native.spec.annotations.read_only_hint is True
    time_schema = TOOLS["get_current_time"].spec.input_schema
    assert time_schema.get("required") is None, "timezone is optional"
    assert "IANA" in time_schema["properties"]["timezone"]["description"]
    calculate_schema = TOOLS["calculate"].spec.input_schema
    assert calculate_schema["required"] == ["expression"]
    assert calculate_schema["properties"]["expression"]["type"] == "string"
    assert TOOLS["calculate"].spec.annotations.safe_to_retry


def test_native_tools_returns_a_new_list_each_time() -> None:
    first = native_tools()
    first.clear()
    assert len(native_tools()) == 2


# -- get_current_time -------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("requested", "zone"),
    [
        ("Europe/Berlin", "Europe/Berlin"),
        ("America/New_York", "America/New_York"),
        ("Asia/Kolkata", "Asia/Kolkata"),
        ("UTC", "UTC"),
        ("utc", "UTC"),
        ("europe/berlin", "Europe/Berlin"),
        ("America/Los Angeles", "America/Los_Angeles"),
        ("  Asia/Tokyo ", "Asia/Tokyo"),
    ],
)
async def test_time_in_a_named_zone(requested: str, zone: str) -> None:
    result = await call("get_current_time", timezone=requested)
    assert not result.is_error, result.text
    data = result.structured_content
    assert data is not None
    assert data["timezone"] == zone
    moment = datetime.fromisoformat(data["datetime"])
    expected_now = datetime.now(zoneinfo.ZoneInfo(zone))
    assert abs(moment - expected_now) < timedelta(seconds=5)
    assert moment.utcoffset() == expected_now.utcoffset()
    assert data["utc_offset"] == data["datetime"][-6:]
    assert data["day_of_week"] == expected_now.strftime("%A")
    assert isinstance(data["is_dst"], bool)
    assert zone in result.text
    assert data["datetime"] in result.text


@pytest.mark.anyio
async def test_local_time_uses_the_machine_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    for arguments in ({}, {"timezone": None}, {"timezone": ""}):
        result = await call("get_current_time", **arguments)
        assert result.structured_content is not None
        assert result.structured_content["timezone"] == "Asia/Tokyo"
        assert result.structured_content["utc_offset"] == "+09:00"


@pytest.mark.anyio
async def test_local_time_without_a_known_zone_name_still_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "not-a-zone")
    result = await call("get_current_time")
    assert not result.is_error
    assert result.structured_content is not None
    assert datetime.fromisoformat(result.structured_content["datetime"]).tzinfo is not None


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("requested", "fragments"),
    [
        ("Mars/Olympus_Mons", ["Unknown time zone 'Mars/Olympus_Mons'", "such as 'Europe/Berlin'"]),
        ("Europe/Berln", ["Did you mean 'Europe/Berlin'", "IANA time zone name"]),
        ("../../etc/passwd", ["Unknown time zone"]),
        ("CET+1", ["Unknown time zone"]),
    ],
)
async def test_unknown_zone_is_an_error_result_with_an_example(requested: str, fragments: list[str]) -> None:
    result = await call("get_current_time", timezone=requested)
    assert result.is_error
    assert result.server == NATIVE_SOURCE
    for fragment in fragments:
        assert fragment in result.text


# -- calculate --------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("expression", "text"),
    [
        ("15 + 27", "42"),
        ("(15 + 27) * 2", "84"),
        ("10 / 4", "2.5"),
        ("10 / 2", "5"),
        ("0.1 + 0.2", "0.3"),
        ("sqrt(2) * pi", "4.44288293815837"),
        ("2 ** 64", "18446744073709551616"),
        ("-5 % 3", "1"),
        ("max(1, 7, 3) - min(4, 2)", "5"),
    ],
)
async def test_calculate(expression: str, text: str) -> None:
    result = await call("calculate", expression=expression)
    assert not result.is_error, result.text
    assert result.text == text


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("expression", "fragment"),
    [
        ("9**9**9", "more than the 1000 allowed"),
        ("1 / 0", "Division by zero"),
        ("import os", "Could not parse"),
        ("open('x')", "Unknown function 'open'"),
        ("x * 2", "Unknown name 'x'"),
    ],
)
async def test_calculate_refusals_are_error_results(expression: str, fragment: str) -> None:
    result = await call("calculate", expression=expression)
    assert result.is_error
    assert fragment in result.text


# Each of these held the interpreter for seconds to minutes before it was bounded: the calculator runs in
# a worker thread, but one big-integer operation keeps the GIL until it ends, freezing every other task.
HOSTILE_CALCULATIONS = [
    ("round(10**997, -10**8)", False, "0"),
    ("round(-(10**999), -10**9)", False, "0"),
    ("pow(10**999, 10**999)", True, "too large"),
    ("pow(7, 10**999, 10**999 + 7)", False, ""),
    ("factorial(10**8)", True, "factorial() is limited"),
    ("(10**999) ** (10**999)", True, "too large"),
    ("1 << 10**8", True, "not supported"),
    ("lcm(" + ", ".join(f"10**99 + {k}" for k in range(1, 60)) + ")", True, "more than 1000 digits"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("expression", "refused", "fragment"), HOSTILE_CALCULATIONS)
async def test_hostile_calculations_end_at_once_and_other_tasks_keep_running(
    expression: str, refused: bool, fragment: str
) -> None:
    finished = anyio.Event()
    heartbeats = 0

    async def heartbeat() -> None:
        # Another task on the same loop: it makes progress only while the calculation lets it.
        nonlocal heartbeats
        while not finished.is_set():
            heartbeats += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(heartbeat)
        await anyio.lowlevel.checkpoint()  # the heartbeat is running before the calculation starts
        before = heartbeats
        result = await call("calculate", expression=expression)
        during = heartbeats - before
        finished.set()
    assert during >= 1, "the loop made no progress while the calculation ran"
    assert result.is_error is refused, result.text
    assert fragment in result.text
