"""`<tool_call>` opens hermes, qwen3_xml and glm calls: the body decides, in every format that has the tag."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tool_call_tag_harness import MARKERS, assert_no_markup_shown, stream

from toolbridge.parsing import ParseResult, TextDelta, parse

TAG_FORMATS = ["hermes", "qwen3_xml", "glm", "auto"]


@pytest.mark.parametrize("fmt", TAG_FORMATS)
@pytest.mark.parametrize(
    ("body", "dialect"),
    [
        ('{"name": "f", "arguments": {"a": "1"}}', "hermes"),
        ('\n  {"name": "f", "arguments": {"a": "1"}}\n', "hermes"),
        ("<function=f>\n<parameter=a>\n1\n</parameter>\n</function>", "qwen3_xml"),
        ("\n<function=f><parameter=a>1</parameter></function>\n", "qwen3_xml"),
        ("f<arg_key>a</arg_key><arg_value>1</arg_value>", "glm"),
        ("f\n<arg_key>a</arg_key>\n<arg_value>1</arg_value>\n", "glm"),
    ],
)
def test_the_body_decides_the_dialect(fmt: str, body: str, dialect: str) -> None:
    result = parse(f"<tool_call>{body}</tool_call>", fmt)
    assert [(c.name, c.arguments, c.format) for c in result.tool_calls] == [("f", {"a": "1"}, dialect)]
    assert (result.content, result.errors) == ("", ())


@pytest.mark.parametrize("fmt", TAG_FORMATS)
@pytest.mark.parametrize(
    "body",
    [
        "",
        "  \n ",
        "f(a=1)",
        "<fn=f>",
        "<b>bold</b>",
        '"just a string"',
        "x" * 300 + " too long for a name",
        "= f",
    ],
)
def test_a_body_of_no_dialect_is_an_error_that_swallows_nothing(fmt: str, body: str) -> None:
    text = f"a <tool_call>{body}</tool_call> b <tool_call>g</tool_call>"
    result = parse(text, fmt)
    assert result.content == "a  b "
    assert [(c.name, c.format) for c in result.tool_calls] == [("g", "glm")]
    [error] = result.errors
    assert error.raw == f"<tool_call>{body.lstrip()}</tool_call>"


@pytest.mark.parametrize("fmt", TAG_FORMATS)
def test_the_output_ending_before_the_body_shows_its_dialect(fmt: str) -> None:
    for text in ("ok <tool_call>", "ok <tool_call>\n<func", "ok <tool_call>get_wea"):
        result = parse(text, fmt)
        assert (result.content, result.tool_calls, len(result.errors)) == ("ok ", (), 1)
        truncated = parse(text, fmt, truncated=True)
        assert (truncated.content, truncated.tool_calls, len(truncated.errors)) == ("ok ", (), 1)


# Any mix of the three dialects' tags, broken or not: every chunking gives the same result, and no marker
# is ever shown as content. (Reasoning is kept as written: a call a model only thinks about is no call.)
PIECES = [
    "<tool_call>",
    "</tool_call>",
    "<function=f>",
    "</function>",
    "<parameter=a>",
    "</parameter>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    '{"name": "h", "arguments": {}}',
    "<think>",
    "</think>",
    "<|im_end|>",
    "<|observation|>",
    "\n",
    " ",
    "x",
    "7",
    "<",
    "{",
    '"',
    "<tool_",
    "<function",
]


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(PIECES), max_size=30), data=st.data())
def test_any_mix_of_tags_reads_the_same_in_any_chunks(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=max(1, len(text) // 2)))
    whole = stream(text, [], "auto")
    chunked = stream(text, cuts, "auto")
    assert ParseResult.from_events(chunked) == ParseResult.from_events(whole)
    assert ParseResult.from_events(stream(text, range(len(text)), "auto")) == ParseResult.from_events(whole)
    assert_no_markup_shown([event for event in chunked if isinstance(event, TextDelta)])
    result = ParseResult.from_events(whole)
    assert not any(marker in result.content for marker in MARKERS)
