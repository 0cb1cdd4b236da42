"""Fuzz: whatever a model writes, the parser and the tool registry answer with data, never a crash.

Arbitrary text, cut into arbitrary chunks, goes through the streaming parser: it raises nothing, and
every call it reports has arguments that can be encoded and sent on (no lone surrogate, no integer past
Python's conversion limit, no nesting past `MAX_NESTING`). Arbitrary names and argument values go to a
real registry with the native tools: every call ends as a `ToolResult` (an error result when the call
was wrong), never an exception. Text is biased towards call markup and hostile values, so the
interesting paths are reached in a few hundred examples.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolbridge._values import MAX_NESTING, value_problem
from toolbridge.parsing import CallProblem, Event, StreamParser, ToolCallEnd, decode_arguments
from toolbridge.tools import CallContext, ToolPipeline, ToolRegistry, native_tools
from toolbridge.tools.observers import TracedCalls
from toolbridge.types import ToolCall

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Every character, lone surrogates included (hypothesis leaves them out of `st.text()` by default).
ANY_CHARACTER = st.characters(codec=None, categories=None)
FRAGMENTS = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "```tool\n",
        "```",
        "<think>",
        "</think>",
        '{"name": "calculate", "arguments": ',
        '{"name": "get_current_time", "arguments": {"timezone": ',
        '"name": ',
        '"arguments": ',
        "\\ud800",
        "\ud800",
        "\\udc00\\ud83d",
        "9" * 4400,
        "-" + "1" * 5000,
        "1e999",
        "[" * (MAX_NESTING + 5),
        "[" * 5000,
        "]" * 200,
        "{",
        "}",
        '"',
        ",",
        ":",
        "\n",
    ]
)
TEXT = st.lists(st.one_of(FRAGMENTS, st.text(ANY_CHARACTER, max_size=20)), max_size=25).map("".join)


@FUZZ
@given(text=TEXT, data=st.data())
def test_the_parser_turns_any_text_into_events_and_sendable_calls(text: str, data: st.DataObject) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=12))
    parser = StreamParser()
    events: list[Event] = []
    for start, end in itertools.pairwise([0, *sorted(set(cuts)), len(text)]):
        events += parser.feed(text[start:end])
    events += parser.finish()
    for event in events:
        if isinstance(event, ToolCallEnd):
            assert value_problem(event.call.arguments) is None
            json.dumps(event.call.arguments, ensure_ascii=False).encode()  # can be sent on
            event.call.name.encode()


@FUZZ
@given(text=TEXT)
def test_argument_text_decodes_to_an_object_or_a_call_problem(text: str) -> None:
    try:
        arguments = decode_arguments(text)
    except CallProblem:
        return
    assert isinstance(arguments, dict)
    assert value_problem(arguments) is None


def _nested(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(0, 6000).map(lambda digits: 10**digits),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(ANY_CHARACTER, max_size=30),
    st.sampled_from(["2 + 2", "UTC", "Europe/Paris", "\ud800", "10**10", "sqrt(-1)", "1/0"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(ANY_CHARACTER, max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
DEEP = st.tuples(SCALARS, st.integers(0, 2 * MAX_NESTING)).map(lambda pair: _nested(*pair))
ARGUMENTS = st.dictionaries(
    st.one_of(st.sampled_from(["expression", "timezone"]), st.text(ANY_CHARACTER, max_size=8)),
    st.one_of(VALUES, DEEP),
    max_size=3,
)
NAMES = st.one_of(
    st.sampled_from(["calculate", "get_current_time", "native__calculate"]),
    st.text(ANY_CHARACTER, max_size=12),
)


@FUZZ
@given(
    calls=st.lists(
        st.tuples(NAMES, ARGUMENTS, st.none() | st.text(ANY_CHARACTER, max_size=10)), min_size=1, max_size=3
    )
)
def test_the_registry_answers_any_call_with_a_result(
    calls: list[tuple[str, dict[str, Any], str | None]],
) -> None:
    async def run() -> None:
        # With the observers every toolbox has: a span named after whatever the model wrote.
        pipeline = ToolPipeline(ToolRegistry(native=native_tools()), [TracedCalls()])
        for index, (name, arguments, source) in enumerate(calls):
            call = ToolCall(name=name, arguments=arguments, id=f"call_{index}", source=source)
            result = (await pipeline.call(call, CallContext(timeout=10))).result
            assert result.call_id == f"call_{index}"
            if result.is_error:
                assert result.error_kind is not None
            result.model_dump_json()  # what is stored and sent back can be encoded

    anyio.run(run)
