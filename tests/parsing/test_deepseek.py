"""The `deepseek` dialect: V3/R1, V3.1 and the DSML markup of V3.2, V4 and V4.1, read the same however
it is chunked.

Every output here is constructed from docs/dialects.md#deepseek (the V4 / V4.1 forms as the release
encoders write them and vLLM's and SGLang's DSML parsers read them).
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
V4B, V4E = "<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"
V41B, V41E = "<｜DSML｜ calls>", "</｜DSML｜ calls>"


def v3(name: str, arguments: str) -> str:
    return f"{CB}function{SEP}{name}\n```json\n{arguments}\n```{CE}"


def v31(name: str, arguments: str) -> str:
    return f"{CB}{name}{SEP}{arguments}{CE}"


def invoke(name: str, *parameters: tuple[str, str, str], space: str = "") -> str:
    """An invoke as the encoders write it; `space=" "` for V4.1's tag names (`<｜DSML｜ invoke`)."""
    body = "".join(
        f'<｜DSML｜{space}parameter name="{key}" string="{kind}">{value}</｜DSML｜{space}parameter>\n'
        for key, kind, value in parameters
    )
    return f'<｜DSML｜{space}invoke name="{name}">\n{body}</｜DSML｜{space}invoke>\n'


WEATHER = {"city": "Paris"}
PARIS, CET = '{"city": "Paris"}', '{"tz": "CET"}'
MARKERS = '{"text": "</tool_call> <think> <｜tool▁sep｜> <｜DSML｜invoke x"}'
NESTED = '{"q": {"list": [1, 2.5, null, true], "s": "\\"quoted\\" \\\\ back\\nline"}, "u": "苹果 ✓"}'
CUT_LIST, CUT_STRING = '{"a": [1, 2', '{"city": "Par'
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
    ("v31-arguments-cut-by-the-call-end", f"{B}{v31('f', CUT_LIST)}{E}after", "after", [], 1),
    ("v3-arguments-cut-by-the-call-end", f"{B}{v3('f', CUT_STRING)}{E}after", "after", [], 1),
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
    (
        "v4-tool-calls-parallel",
        f"I'll check.\n\n{V4B}\n"
        + invoke("get_weather", ("city", "true", "Paris"), ("days", "false", "3"))
        + invoke("get_time", ("tz", "true", "CET"))
        + f"{V4E}{EOS}",
        "I'll check.\n\n",
        [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"tz": "CET"})],
        0,
    ),
    (
        "v4-self-closing-invoke",
        f'{V4B}\n<｜DSML｜invoke name="now"/>\n<｜DSML｜invoke name="today" />\n'
        + invoke("get_time", ("tz", "true", "CET"))
        + f"{V4E}after",
        "after",
        [("now", {}), ("today", {}), ("get_time", {"tz": "CET"})],
        0,
    ),
    (
        "v4-nested-unicode-escaped",
        f"{V4B}\n"
        + invoke(
            "write",
            ("path", "true", "/tmp/é 日本.txt\n  keep  "),
            ("data", "false", '{"l": [1, 2.5, null, true], "s": "q\\" }"}'),
            ("m", "true", f'{V4E[:-1]} <｜DSML｜ invoke name="g"> </think>'),
        )
        + V4E,
        "",
        [
            (
                "write",
                {
                    "path": "/tmp/é 日本.txt\n  keep  ",
                    "data": {"l": [1, 2.5, None, True], "s": 'q" }'},
                    "m": f'{V4E[:-1]} <｜DSML｜ invoke name="g"> </think>',
                },
            )
        ],
        0,
    ),
    (
        "v4-reasoning-then-call",
        f"<think>The user wants the weather.</think>\n\n{V4B}\n"
        + invoke("get_weather", ("city", "true", "Paris"))
        + V4E,
        "\n\n",
        [("get_weather", WEATHER)],
        0,
    ),
    (
        "v4-json-body",
        f'{V4B}\n<｜DSML｜invoke name="get_weather">\n{{"city": "Paris"}}\n</｜DSML｜invoke>\n{V4E}',
        "",
        [("get_weather", WEATHER)],
        0,
    ),
    ("v4-truncated-in-a-self-closing-tag", f'Sure.{V4B}\n<｜DSML｜invoke name="now"', "Sure.", [], 1),
    (
        "v41-spaced-tag-names",
        f"Checking.\n\n{V41B}\n"
        + invoke("get_weather", ("city", "true", "Paris"), ("days", "false", "3"), space=" ")
        + invoke("get_time", ("tz", "true", "CET"), space=" ")
        + f"{V41E}{EOS}",
        "Checking.\n\n",
        [("get_weather", {"city": "Paris", "days": 3}), ("get_time", {"tz": "CET"})],
        0,
    ),
    (
        "v41-self-closing-invoke",
        f'{V41B}\n<｜DSML｜ invoke name="now"/>\n{V41E}',
        "",
        [("now", {})],
        0,
    ),
    (
        "dsml-invoke-without-section",
        "Sure. " + invoke("get_weather", ("city", "true", "Paris")) + '<｜DSML｜ invoke name="now"/>Done.',
        "Sure. Done.",
        [("get_weather", WEATHER), ("now", {})],
        0,
    ),
    ("v4-stray-end-markers", f"Hi{V4E}{V41E}</｜DSML｜ invoke> there", "Hi there", [], 0),
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
        (f'{V4B}<｜DSML｜invoke name="f"/>{V4E}', ["{}"]),
        # DSML parameters are not JSON text: the arguments come as JSON in one piece, at the end.
        (
            f"{DB}{invoke('f', ('city', 'true', 'Paris'), ('days', 'false', '3'))}{DE}",
            ['{"city": "Paris", "days": 3}'],
        ),
    ],
    ids=["v3-fenced", "v3.1", "dsml-json-body", "v4-self-closing", "dsml-parameters"],
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


def test_a_self_closing_invoke_ends_on_the_feed_that_delivers_its_tag_end() -> None:
    parser = StreamParser("deepseek")
    assert parser.feed(f'{V4B}\n<｜DSML｜invoke name="now"/') == []
    start, arguments, end = parser.feed(">")
    assert (start, arguments) == (ToolCallStart("now"), ToolCallArgumentsDelta("{}"))
    assert isinstance(end, ToolCallEnd)
    assert end.call.arguments == {}
    assert parser.feed(f"\n{V4E}ok") == [TextDelta("ok")]


@pytest.mark.parametrize("opened_by", ["the model", "the prompt"])
def test_a_v4_call_section_ends_the_reasoning(opened_by: str) -> None:
    # vLLM's DeepSeek V4 reasoning parser: "V4 can start DSML tool calls directly after reasoning".
    # Reasoning the model opened ends at the section; with only the hint, the call marker shows the
    # text before it was content (the output decides).
    think = "<think>" if opened_by == "the model" else ""
    text = "Weather? Use a tool.\n\n"
    output = f"{think}{text}{V4B}\n" + invoke("get_weather", ("city", "true", "Paris")) + V4E
    parser = StreamParser("deepseek", reasoning_open=not think)
    streamed = ParseResult.from_events(
        [event for char in output for event in parser.feed(char)] + parser.finish()
    )
    for result in (parse(output, "deepseek", reasoning_open=not think), streamed):
        assert (result.reasoning, result.content, calls(result)) == (
            text if think else "",
            "" if think else text,
            [("get_weather", WEATHER)],
        )


@pytest.mark.parametrize(
    ("output", "names", "errors"),
    [
        (f"{B}{v31('f', '{}')}", ["f"], 0),
        (f'{V4B}\n<｜DSML｜invoke name="now"/>\n', ["now"], 0),
        (
            f'{V4B}\n<｜DSML｜invoke name="now"/>\n<｜DSML｜invoke name="get_weather">\n<｜DSML｜para',
            ["now"],
            1,
        ),
    ],
    ids=["v3.1-after-a-call", "v4-after-a-call", "v4-in-the-second-call"],
)
def test_an_output_cut_off_between_calls_reports_only_a_call_it_cut(
    output: str, names: list[str], errors: int
) -> None:
    result = parse(output, "deepseek", truncated=True)
    assert ([call.name for call in result.tool_calls], len(result.errors)) == (names, errors)


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
