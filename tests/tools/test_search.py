"""Tool search (`toolbridge.tools.search`): words of names in any casing, BM25 ranking, when `auto` searches,
and a run's offered tools that only grow at their end. bench/scale.py measures the recall on real servers;
the test at the end runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolbridge.tools.search import SEARCH_TOOL_NAME, ToolIndex, ToolSearch, search_wanted, tokens
from toolbridge.types import ToolCall, ToolSpec

BENCH = Path(__file__).resolve().parents[2] / "bench"


def spec(name: str, description: str = "", **properties: str) -> ToolSpec:
    schema = {"type": "object", "properties": {key: {"type": kind} for key, kind in properties.items()}}
    return ToolSpec(name=name, description=description, input_schema=schema)


CATALOG = [
    spec("getWeatherForecast", "The forecast for a city.", city="string"),
    spec("send_email", "Send an email message to someone.", to="string", body="string"),
    spec("list-files", "List the files in a folder.", path="string"),
    spec("read_range", "Read cell values of a spreadsheet range.", range="string"),
    spec("convert_currency", "Convert money between currencies.", amount="number"),
]


def test_names_in_any_casing_give_the_same_words_and_common_words_are_left_out() -> None:
    assert tokens("getWeatherForecast") == tokens("get_weather-forecast") == ["weather", "forecast"]
    assert tokens("HTTPServer listing files") == ["http", "server", "list", "file"]
    assert tokens("the queries of a user") == ["query", "user"]


@pytest.mark.parametrize(
    ("query", "best"),
    [
        ("weather in Paris", "getWeatherForecast"),
        ("email my boss", "send_email"),
        ("which files are in my folder", "list-files"),
        ("cells of a spreadsheet", "read_range"),
        ("euros to dollars, convert this amount of money", "convert_currency"),
    ],
)
def test_the_best_match_comes_first(query: str, best: str) -> None:
    assert ToolIndex(CATALOG).search(query, 2)[0].name == best


def test_a_query_sharing_no_word_finds_nothing_and_a_long_one_is_cut() -> None:
    index = ToolIndex(CATALOG)
    assert index.search("zebra xylophone") == []
    assert index.search("weather " + "x" * 100_000)[0].name == "getWeatherForecast"


def test_auto_searches_beyond_40_tools_or_10000_tokens() -> None:
    few = [spec(f"tool_{n}", "A tool.") for n in range(40)]
    assert not search_wanted("auto", few)
    assert search_wanted("auto", [*few, spec("tool_40")])
    assert search_wanted("auto", [spec("long", "word " * 10_000)])
    assert search_wanted(True, few[:1])
    assert not search_wanted(False, [*few, *few])


@pytest.mark.anyio
async def test_found_tools_are_offered_after_the_earlier_ones_in_the_order_found() -> None:
    search = ToolSearch(CATALOG, pinned=["read_range"])
    assert [tool.name for tool in search.offered()] == ["read_range", SEARCH_TOOL_NAME]

    found = await search.tool.run(ToolCall(name=SEARCH_TOOL_NAME, arguments={"query": "email", "limit": 1}))
    assert "send_email(to?: string, body?: string) - Send an email message to someone." in found.text
    await search.tool.run(ToolCall(name=SEARCH_TOOL_NAME, arguments={"query": "weather or email"}))
    names = [tool.name for tool in search.offered()]
    assert names == ["read_range", SEARCH_TOOL_NAME, "send_email", "getWeatherForecast"]

    nothing = await search.tool.run(ToolCall(name=SEARCH_TOOL_NAME, arguments={"query": "zebra"}))
    assert "No tool matches 'zebra'" in nothing.text
    refused = await search.tool.run(ToolCall(name=SEARCH_TOOL_NAME, arguments={"limit": 3}))
    assert refused.is_error
    assert "query" in refused.text


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_scale_bench_finds_the_right_tool_in_the_first_five_for_nine_requests_in_ten() -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(BENCH / "scale.py")],
        capture_output=True,
        text=True,
        timeout=110,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "   300 " in done.stdout
    assert "(goal 90%: met)" in done.stdout, done.stdout
    assert "code mode / one per step: requests 0.18" in done.stdout  # 2 model requests against 11
