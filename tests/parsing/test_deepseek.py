"""The `deepseek` dialect: V3/R1, V3.1 and V3.2 (DSML) markup, read the same however it is chunked.

Every output here is constructed from docs/dialects.md#deepseek.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolbridge.parsing import (
    Event,
    ParseResult,
    StreamParser,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
    available_formats,
    call_format,
    parse,
)

B, E = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CB, CE, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
EOS = "<｜end▁of▁sentence｜>"
DB, DE = "<｜DSML｜function_calls>", "</｜DSML｜function_calls>"


def v3(name: str, arguments: str) -> str:
    return f"{CB}function{SEP}{name}\n```json\n{arguments}\n```{CE}"


def v31(name: str, arguments: str) -> str:
    return f"{CB}{name}{SEP}{arguments}{CE}"


def invoke(name: str, *parameters: tuple[str, str, str]) -> str:
    body = "".join(
        f'<｜DSML｜parameter name="{key}" string="{kind}">{value}</｜DSML｜parameter>\n'
        for key, kind, value in parameters
    )
    return f'<｜DSML｜invoke name="{name}">\n{body}</｜DSML｜invoke>\n'


WEATHER = {"city": "Paris"}
PARIS, CET = '{"city": "Paris"}', '{"tz": "CET"}'
MARKERS = '{"text": "</tool_call> <think> <｜tool▁sep｜> <｜DSML｜invoke x"}'
NESTED = '{"q": {"list": [1, 2.5, null, true], "s": "\\"quoted\\" \\\\ back\\nline"}, "u": "苹果 ✓"}'
NESTED_VALUE = {"q": {"list": [1, 2.5, None, True], "s": '"quoted" \\ back\nline'}, "u": "苹果 ✓"}

# (id, output, content, [(name, arguments)], number of errors)
CASES: list[tuple[str, str, str, list[tuple[str, dict[str, Any]]], int]] = [
    ("v3-single", f"{B}{v3('get_weather', PARIS)}{E}", "", [("get_weather", WEATHER)], 0),
    (
        "v3-parallel",
        f"{B}{v3('get_weather', PARIS)}\n{v3('get_time', CET)}{E}{EOS}",
        "",
        [("get_weather", WEATHER), ("get_time", {"tz": "CET"})],
        0,
    ),
    (
        "v31-single-text-around",
        f"Let me check.{B}{v31('get_weather', PARIS)}{E}Done.{EOS}",
        "Let me check.Done.",
        [("get_weather", WEATHER)],
        0,
    ),
    (
        "v31-parallel",
        f"{B}{v31('get_weather', PARIS)}{v31('get_time', CET)}{E}",
        "",
        [("get_weather", WEATHER), ("get_time", {"tz": "CET"})],
        0,
    ),
    (
        "no-call",
        f"Paris is sunny, 3 < 4 and <b>bold</b>.{EOS}",
        "Paris is sunny, 3 < 4 and <b>bold</b>.",
        [],
        0,
    ),
    ("v31-nested-unicode-escaped", f"{B}{v31('search', NESTED)}{E}", "", [("search", NESTED_VALUE)], 0),
    ("v3-nested-unicode-escaped", f"{B}{v3('search', NESTED)}{E}", "", [("search", NESTED_VALUE)], 0),
    (
        "empty-arguments",
        f"{B}{v31('now', '{}')}{v31('today', '')}{v3('tick', '{}')}{E}",
        "",
        [("now", {}), ("today", {}), ("tick", {})],
        0,
    ),
    (
        "v31-marker-inside-string",
        f"{B}{v31('echo', MARKERS)}{E}",
        "",
        [("echo", {"text": "</tool_call> <think> <｜tool▁sep｜> <｜DSML｜invoke x"})],
        0,
    ),
    (
        "v31-malformed-then-valid",
        f"{B}{v31('broken', 'not json at all')}{v31('get_time', CET)}{E}after",
        "after",
        [("get_time", {"tz": "CET"})],
        1,
    ),
    ("no-separator", f"{B}{CB}get_weather {{}}{CE}{E} then text", " then text", [], 1),
    ("section-of-prose", f"{B} I changed my mind.", "I changed my mind.", [], 1),
    (
        "missing-section-end",
        f"{B}{v31('get_weather', PARIS)}\nThe weather is fine.",
        "The weather is fine.",
        [("get_weather", WEATHER)],
        0,
    ),
    (
        "missing-call-end",
        f"{B}{CB}get_weather{SEP}{PARIS}{E}ok",
        "ok",
        [("get_weather", WEATHER)],
        0,
    ),
    ("truncated", f"Sure.{B}{CB}get_weather{SEP}{PARIS[:12]}", "Sure.", [], 1),
    ("stray-end-markers", f"Hi{CE}{E}{EOS}{DE}</｜DSML｜invoke> there", "Hi there", [], 0),
    (
        "reasoning-then-call",
        f"<think>Weather? Use a tool.</think>\n\n{B}{v31('get_weather', PARIS)}{E}",
        "\n\n",
        [("get_weather", WEATHER)],
        0,
    ),
    (
        "dsml-parallel",
        f"I'll check.\n\n{DB}\n"
        + invoke("get_weather", ("city", "true", "Paris"), ("days", "false", "3"))
        + invoke("get_time", ("tz", "true", "CET"))
        + f"{DE}",
        "I'll check.\n\n",
        [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"tz": "CET"})],
        0,
    ),
    (
        "dsml-typed-and-raw-values",
        f"{DB}\n"
        + invoke(
            "f",
            ("s", "true", "  keep  spaces\n"),
            ("o", "false", '{"a": [1, {"b": null}]}'),
            ("b", "false", "true"),
            ("x", "false", "not json"),
            ("m", "true", '</tool_call> <｜DSML｜invoke name="g"> 苹果'),
        )
        + f"{DE}after",
        "after",
        [
            (
                "f",
                {
                    "s": "  keep  spaces\n",
                    "o": {"a": [1, {"b": None}]},
                    "b": True,
                    "x": "not json",
                    "m": '</tool_call> <｜DSML｜invoke name="g"> 苹果',
                },
            )
        ],
        0,
    ),
    ("dsml-empty", f'{DB}\n<｜DSML｜invoke name="now">\n</｜DSML｜invoke>\n{DE}', "", [("now", {})], 0),
    (
        "dsml-json-body",
        f'{DB}<｜DSML｜invoke name="get_weather">{{"city": "Paris"}}</｜DSML｜invoke>{DE}',
        "",
        [("get_weather", WEATHER)],
        0,
    ),
    (
        "dsml-malformed-then-valid",
        f"{DB}\n<｜DSML｜invoke>\n</｜DSML｜invoke>\n{invoke('get_time', ('tz', 'true', 'CET'))}{DE}after",
        "after",
        [("get_time", {"tz": "CET"})],
        1,
    ),
    (
        "dsml-unclosed-parameter",
        f'{DB}<｜DSML｜invoke name="f"><｜DSML｜parameter name="a" string="true">x</｜DSML｜invoke>{DE}after',
        "after",
        [],
        1,
    ),
    ("dsml-truncated", f'{DB}\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜parameter name="ci', "", [], 1),
]


def stream(chunks: list[str]) -> list[Event]:
    parser = StreamParser("deepseek")
    events: list[Event] = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.finish()


def calls(result: ParseResult) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in result.tool_calls]


@pytest.mark.parametrize(
    ("output", "content", "expected", "errors"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_case_reads_the_same_in_one_chunk_and_one_character_at_a_time(
    output: str, content: str, expected: list[tuple[str, dict[str, Any]]], errors: int
) -> None:
    whole = ParseResult.from_events(stream([output]))
    assert (whole.content, calls(whole), len(whole.errors)) == (content, expected, errors)
    assert all(call.id is None and call.format == "deepseek" for call in whole.tool_calls)
    assert ParseResult.from_events(stream(list(output))) == whole
    assert parse(output, "deepseek") == whole
    assert parse(output) == whole  # auto knows the markers too


@settings(max_examples=40, deadline=None)
@pytest.mark.parametrize("output", [c[1] for c in CASES], ids=[c[0] for c in CASES])
@given(data=st.data())
def test_random_chunks_read_the_same(output: str, data: st.DataObject) -> None:
    cuts = sorted(data.draw(st.lists(st.integers(0, len(output)), max_size=12)))
    chunks = [output[a:b] for a, b in zip([0, *cuts], [*cuts, len(output)], strict=True)]
    events, whole = stream(chunks), stream([output])
    assert ParseResult.from_events(events) == ParseResult.from_events(whole)
    assert arguments_per_call(events) == arguments_per_call(whole)


def arguments_per_call(events: list[Event]) -> list[str]:
    """The argument deltas of each call that started, joined."""
    found: list[str] = []
    for event in events:
        if isinstance(event, ToolCallStart):
            found.append("")
        elif isinstance(event, ToolCallArgumentsDelta):
            found[-1] += event.text
    return found


@pytest.mark.parametrize(
    ("output", "arguments"),
    [
        (f"{B}{v3('f', NESTED)}\n{v3('g', '{}')}{E}", [NESTED, "{}"]),
        (f"{B}{v31('f', MARKERS)}{v31('g', ' ' + PARIS + ' ')}{E}", [MARKERS, PARIS]),
        (f'{DB}<｜DSML｜invoke name="f">{CET}</｜DSML｜invoke>{DE}', [CET]),
        # DSML parameters are not JSON text: the arguments come as JSON in one piece, at the end.
        (
            f"{DB}{invoke('f', ('city', 'true', 'Paris'), ('days', 'false', '3'))}{DE}",
            ['{"city": "Paris", "days": 3}'],
        ),
    ],
    ids=["v3-fenced", "v3.1", "dsml-json-body", "dsml-parameters"],
)
def test_arguments_stream_as_the_json_arrives(output: str, arguments: list[str]) -> None:
    assert arguments_per_call(stream([output])) == arguments
    assert arguments_per_call(stream(list(output))) == arguments


def test_arguments_stream_before_the_call_ends() -> None:
    parser = StreamParser("deepseek")
    events = parser.feed(f"{B}{CB}function{SEP}f\n```json\n" + '{"a": "x')
    assert events == [ToolCallStart("f"), ToolCallArgumentsDelta('{"a": "x')]
    assert parser.feed('y"}\n``') == [ToolCallArgumentsDelta('y"}')]
    assert parser.feed("`") == []


@pytest.mark.parametrize(
    "arguments",
    [{}, WEATHER, NESTED_VALUE, {"text": f"{E}{CE} and </tool_call>"}],
    ids=["empty", "simple", "nested", "markers"],
)
def test_a_written_call_reads_back(arguments: dict[str, Any]) -> None:
    written = call_format("deepseek").format_call("read_range", arguments)
    result = parse(f"Let me look.{written}", "deepseek")
    assert calls(result) == [("read_range", arguments)]
    assert result.errors == ()
    assert result.content == "Let me look."


def test_tool_call_end_comes_on_the_feed_that_delivers_each_call_end() -> None:
    parser = StreamParser("deepseek")
    assert parser.feed(f"{B}{CB}get_weather") == []
    assert parser.feed(SEP) == [ToolCallStart("get_weather")]
    assert parser.feed('{"city": "Paris"}') == [ToolCallArgumentsDelta('{"city": "Paris"}')]
    (end,) = parser.feed(CE)
    assert isinstance(end, ToolCallEnd)
    assert end.call.arguments == WEATHER
    assert parser.feed(E + "ok") == [TextDelta("ok")]
    assert parser.finish() == []


def test_the_prompt_may_open_the_reasoning() -> None:
    output = f"Need the weather.</think>{B}{v31('get_weather', PARIS)}{E}"
    parser = StreamParser("deepseek", reasoning_open=True)
    result = ParseResult.from_events([*parser.feed(output), *parser.finish()])
    assert (result.reasoning, result.content, calls(result)) == (
        "Need the weather.",
        "",
        [("get_weather", WEATHER)],
    )


def test_deepseek_is_a_listed_format() -> None:
    assert "deepseek" in available_formats()
