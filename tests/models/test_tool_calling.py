"""How tools reach a model: the native, prompt and auto wrappers around any model, each yielding the same
native-style events. The model behind them is an in-process `FunctionModel`."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from toolbridge.errors import ToolsNotSupportedError
from toolbridge.models import (
    AutoToolsModel,
    Finish,
    InvalidToolCall,
    Model,
    ModelEvent,
    ModelRequest,
    NativeToolsModel,
    PromptToolsModel,
    ReasoningDelta,
    TextDelta,
    ToolCallCollector,
    ToolCallDelta,
    ToolModeChanged,
    tool_calling_model,
)
from toolbridge.models._text_calls import MARKER_STARTS
from toolbridge.parsing import available_formats, call_format
from toolbridge.parsing._stream import _plain_modes
from toolbridge.prompting import render_tool_catalog
from toolbridge.testing import FunctionModel
from toolbridge.types import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolSpec,
    UserMessage,
)

pytestmark = pytest.mark.anyio

CALC = ToolSpec(
    name="calculate",
    description="Evaluate arithmetic.",
    input_schema={
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
)
HERMES_CALL = '<tool_call>{"name": "calculate", "arguments": {"expression": "1 + 2"}}</tool_call>'


async def drain(model: Model, request: ModelRequest) -> list[ModelEvent]:
    async with model.stream(request) as events:
        return [event async for event in events]


def asking(*messages: Any, tools: tuple[ToolSpec, ...] = (CALC,)) -> ModelRequest:
    return ModelRequest(messages=list(messages), tools=tools)


def calls_of(events: list[ModelEvent]) -> list[tuple[str, dict[str, Any]]]:
    collector = ToolCallCollector()
    for event in events:
        if isinstance(event, ToolCallDelta):
            collector.add(event)
    return [(c.call.name, c.call.arguments) for c in collector.calls()]


def text_of(events: list[ModelEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


# -- prompt mode -------------------------------------------------------------------------------------


async def test_prompt_mode_puts_the_catalog_in_the_system_prompt_and_no_tools_on_the_wire() -> None:
    inner = FunctionModel.replying("Hello.")
    await drain(
        PromptToolsModel(inner), asking(SystemMessage(content="You are Sums."), UserMessage(content="Hi"))
    )

    [sent] = inner.requests
    assert sent.tools == ()
    [system, user] = sent.messages
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("You are Sums.\n\n# Tools\n")
    assert render_tool_catalog([CALC]) in system.content
    assert "To call a tool, write a <tool_call> block" in system.content
    assert user == UserMessage(content="Hi")


async def test_prompt_mode_rewrites_earlier_calls_and_results_into_the_dialects_text() -> None:
    call = ToolCall(name="calculate", arguments={"expression": "1 + 2"}, id="call_1")
    history = [
        UserMessage(content="1 + 2?"),
        AssistantMessage(content="Let me add.", tool_calls=[call]),
        ToolMessage(
            name="calculate", result=ToolResult(call_id="call_1", content=[{"type": "text", "text": "3"}])
        ),
        UserMessage(content="And now?"),
    ]
    for dialect in ("hermes", "fenced"):
        inner = FunctionModel.replying("3.")
        await drain(PromptToolsModel(inner, dialect=dialect), asking(*history))
        [sent] = inner.requests
        assert [m.role for m in sent.messages] == ["system", "user", "assistant", "user"]
        written = call_format(dialect).format_call("calculate", {"expression": "1 + 2"})
        assert sent.messages[2] == AssistantMessage(content=f"Let me add.\n{written}")
        assert (
            sent.messages[3].content == '<tool_result name="calculate" id="call_1">3</tool_result>\nAnd now?'
        )
        example = call_format(dialect).format_call("calculate", {"expression": "example"})
        assert example in sent.messages[0].content  # the convention is in the same dialect


async def test_prompt_mode_renders_each_earlier_part_once_so_a_step_costs_the_same_late_in_a_run() -> None:
    # The adapters convert each message object to its wire form once: rendering the transcript anew
    # every step would make every earlier message new again, and a run quadratic.
    call = ToolCall(name="calculate", arguments={"expression": "1 + 2"}, id="call_1")
    history = [
        SystemMessage(content="You are Sums."),
        UserMessage(content="1 + 2?"),
        AssistantMessage(content="Let me add.", tool_calls=[call]),
        ToolMessage(
            name="calculate", result=ToolResult(call_id="call_1", content=[{"type": "text", "text": "3"}])
        ),
    ]
    inner = FunctionModel(lambda _request: "3.")
    prompt = PromptToolsModel(inner)
    await drain(prompt, asking(*history))
    await drain(prompt, asking(*history, AssistantMessage(content="3."), UserMessage(content="Sure?")))

    first, second = inner.requests
    assert len(second.messages) == len(first.messages) + 2
    assert all(a is b for a, b in zip(first.messages, second.messages, strict=False))


async def test_prompt_mode_reads_calls_from_the_text_and_closes_the_stream_at_a_complete_call() -> None:
    def reply(_request: ModelRequest) -> Any:
        yield "Let me add.\n"
        yield HERMES_CALL[:20]
        yield HERMES_CALL[20:]
        yield "\n\n(waiting for the tool result...)"
        raise AssertionError("read on after the call was complete")

    inner = FunctionModel(reply)
    events = await drain(PromptToolsModel(inner), asking(UserMessage(content="1 + 2?")))

    assert text_of(events) == "Let me add.\n"
    assert calls_of(events) == [("calculate", {"expression": "1 + 2"})]
    assert events[-1] == Finish("tool_calls", closed_early=True)
    assert not inner.replies[0].completed


async def test_an_unreadable_call_comes_out_as_feedback_in_the_dialects_words() -> None:
    inner = FunctionModel.replying("<tool_call>calculate 1 + 2</tool_call>")
    events = await drain(PromptToolsModel(inner), asking(UserMessage(content="1 + 2?")))

    [invalid] = [e for e in events if isinstance(e, InvalidToolCall)]
    assert invalid.raw == "<tool_call>calculate 1 + 2</tool_call>"
    assert "could not be parsed" in invalid.feedback
    assert "You wrote: <tool_call>calculate 1 + 2</tool_call>" in invalid.feedback
    assert '<tool_call>{"name": "tool_name"' in invalid.feedback
    assert calls_of(events) == []


async def test_without_tools_the_wrappers_pass_the_stream_through_untouched() -> None:
    for wrapper in (PromptToolsModel, NativeToolsModel, AutoToolsModel):
        inner = FunctionModel.replying(f"Markup as text: {HERMES_CALL}")
        events = await drain(wrapper(inner), asking(UserMessage(content="Show me."), tools=()))
        assert text_of(events) == f"Markup as text: {HERMES_CALL}"
        assert inner.requests[0].messages == [UserMessage(content="Show me.")]


# -- native mode -------------------------------------------------------------------------------------


async def test_native_mode_sends_tools_and_recovers_markup_leaked_into_the_text() -> None:
    native_call = ToolCall(name="calculate", arguments={"expression": "2 * 2"}, id="call_native")
    inner = FunctionModel.replying([native_call, HERMES_CALL])
    events = await drain(NativeToolsModel(inner), asking(UserMessage(content="Both?")))

    [sent] = inner.requests
    assert sent.tools == (CALC,)
    assert "never invent" in sent.messages[0].content  # the native guidance, no catalog
    assert "## calculate" not in sent.messages[0].content
    assert text_of(events) == ""
    # Native and recovered calls on indexes of their own, in the order they came.
    assert calls_of(events) == [
        ("calculate", {"expression": "2 * 2"}),
        ("calculate", {"expression": "1 + 2"}),
    ]


def random_chunks(text: str, seed: int) -> list[str]:
    rng = random.Random(seed)
    chunks, pos = [], 0
    while pos < len(text):
        size = rng.choice([1, 1, 2, 3, 4, 6, 9])
        chunks.append(text[pos : pos + size])
        pos += size
    return chunks


LEAK_SCAN_TEXTS = [
    "Let me look that up for you, it should not take long at all.",
    "Words  with  double  spaces,\ttabs\nand new lines\n\n then more words. ",
    "  Leading space, a < b and [1] and `code`, {braces} and <b>bold</b> in prose.",
    "I'll check. " + call_format("hermes").format_call("calculate", {"expression": "1 + 2"}),
    "Checking:\n\n" + call_format("mistral").format_call("calculate", {"expression": "3"}) + "\nafter",
    "<think>Plan it.</think>\n\nSure, computing now. " + HERMES_CALL,
    "Prose first, then a stray </think> and an end <|im_end|> token, then more prose to read.",
]


@pytest.mark.parametrize("dialect", ["hermes", "llama3_json"])
@pytest.mark.parametrize("text", LEAK_SCAN_TEXTS)
async def test_native_text_reads_the_same_however_it_is_chunked(text: str, dialect: str) -> None:
    # Chunks no marker can start in pass by the parser (see `_text_calls`): that may change nothing.
    async def read(chunks: list[str]) -> tuple[str, str, list[tuple[str, dict[str, Any]]]]:
        inner = FunctionModel.replying([TextDelta(chunk) for chunk in chunks])
        inner.dialect = dialect
        events = await drain(NativeToolsModel(inner), asking(UserMessage(content="Go.")))
        reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
        return text_of(events), reasoning, calls_of(events)

    whole = await read([text])
    assert whole[0] or whole[2]
    for seed in range(8):
        chunks = random_chunks(text, seed)
        assert await read(chunks) == whole, chunks


async def test_native_text_no_marker_can_start_in_passes_as_it_came() -> None:
    sent = [TextDelta(piece) for piece in ("Let", " me", " look", " that", " up.", " <b>", "Done", ".")]
    inner = FunctionModel.replying(sent)

    events = await drain(NativeToolsModel(inner), asking(UserMessage(content="Go.")))

    texts = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(e.text for e in texts) == "Let me look that up. <b>Done."
    assert all(out is came for out, came in zip(texts, sent, strict=True))  # not made again


@pytest.mark.parametrize("format_name", available_formats())
def test_every_character_a_marker_begins_with_is_looked_for(format_name: str) -> None:
    content, reasoning = _plain_modes(format_name)
    assert content.triggers | reasoning.triggers <= MARKER_STARTS


# -- auto mode ---------------------------------------------------------------------------------------


async def test_auto_mode_switches_to_prompt_mode_when_tools_are_rejected_and_says_so() -> None:
    def reply(request: ModelRequest) -> str:
        if request.tools:
            raise ToolsNotSupportedError("the endpoint does not support tools", model="m")
        return HERMES_CALL

    inner = FunctionModel(reply, tool_mode="auto")
    auto = AutoToolsModel(inner)
    first = await drain(auto, asking(UserMessage(content="1 + 2?")))
    second = await drain(auto, asking(UserMessage(content="1 + 2?")))

    assert first[0] == ToolModeChanged("prompt", "the endpoint does not support tools")
    assert calls_of(first) == calls_of(second) == [("calculate", {"expression": "1 + 2"})]
    assert [bool(r.tools) for r in inner.requests] == [True, False, False]
    assert not any(isinstance(e, ToolModeChanged) for e in second)
    assert auto.active_tool_mode == "prompt"


async def test_a_switch_to_prompt_mode_is_the_runs_own_not_the_shared_models() -> None:
    """Two chats on one model object: one finding the endpoint rejecting tools changes neither the model
    nor the other chat, which finds out (and says so) for itself."""

    def reply(request: ModelRequest) -> str:
        if request.tools:
            raise ToolsNotSupportedError("the endpoint does not support tools", model="m")
        return HERMES_CALL

    shared = FunctionModel(reply, tool_mode="auto")
    one_chat, other_chat = AutoToolsModel(shared), AutoToolsModel(shared)
    first = await drain(one_chat, asking(UserMessage(content="1 + 2?")))

    assert one_chat.active_tool_mode == "prompt"
    assert other_chat.active_tool_mode == "native"
    assert shared.tool_mode == "auto"
    second = await drain(other_chat, asking(UserMessage(content="1 + 2?")))
    assert first[0] == second[0] == ToolModeChanged("prompt", "the endpoint does not support tools")
    assert [bool(r.tools) for r in shared.requests] == [True, False, True, False]


async def test_auto_mode_does_not_hide_a_rejection_once_the_reply_has_begun() -> None:
    def reply(_request: ModelRequest) -> Any:
        yield "Partial"
        raise ToolsNotSupportedError("late", model="m")

    with pytest.raises(ToolsNotSupportedError):
        await drain(AutoToolsModel(FunctionModel(reply)), asking(UserMessage(content="?")))


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("native", NativeToolsModel), ("prompt", PromptToolsModel), ("auto", AutoToolsModel)],
)
def test_the_mode_picks_the_wrapper_and_a_wrapper_stays_as_it_is(mode: Any, expected: type) -> None:
    assert type(tool_calling_model(FunctionModel.replying(), mode)) is expected
    assert type(tool_calling_model(FunctionModel.replying(tool_mode=mode))) is expected
    fenced = PromptToolsModel(FunctionModel.replying(), dialect="fenced")
    assert tool_calling_model(fenced, mode) is fenced


async def test_an_auto_wrapper_given_to_several_runs_is_copied_for_each() -> None:
    def reply(request: ModelRequest) -> str:
        if request.tools:
            raise ToolsNotSupportedError("the endpoint does not support tools", model="m")
        return HERMES_CALL

    given = AutoToolsModel(FunctionModel(reply), dialect="fenced")
    one_run = tool_calling_model(given)
    await drain(one_run, asking(UserMessage(content="1 + 2?")))
    next_run = tool_calling_model(given)

    assert (one_run.active_tool_mode, next_run.active_tool_mode) == ("prompt", "native")
    assert next_run is not given
    assert next_run.inner is given.inner
    assert next_run.dialect == "fenced"


# -- turning deltas into calls --------------------------------------------------------------------------


def test_arguments_nested_past_the_stack_in_a_cut_off_reply_are_a_problem_not_a_crash() -> None:
    collector = ToolCallCollector()
    collector.add(ToolCallDelta(0, id="call_a", name="calculate", arguments="[" * 100_000 + "]" * 100_000))
    [collected] = collector.calls(truncated=True)
    assert collected.call.arguments == {}
    assert collected.cut_off
    assert collected.problem is not None


def test_native_arguments_cut_short_are_a_problem_even_when_the_reply_was_not_cut_off() -> None:
    collector = ToolCallCollector()
    collector.add(ToolCallDelta(0, id="call_a", name="write", arguments='{"path": "a.txt", "lines": ["one"'))
    collector.add(ToolCallDelta(1, id="call_b", name="write", arguments='{"path": "b.txt"'))
    cut_list, cut_object = collector.calls()
    for collected in (cut_list, cut_object):
        assert collected.call.arguments == {}
        assert not collected.cut_off
        assert collected.problem is not None
        assert "so it did not run" in collected.problem
    assert "ends before its closing ']}'" in (cut_list.problem or "")


def test_deltas_become_calls_with_one_repair_rule_and_problems_for_the_model() -> None:
    collector = ToolCallCollector()
    pieces = [
        ToolCallDelta(0, id="call_a", name="calculate", arguments='{"expression": '),
        ToolCallDelta(1, id="call_b", name="calculate", arguments="expression is 2 + 2"),
        ToolCallDelta(0, arguments='"1 + 1",}'),  # a trailing comma: repaired
        ToolCallDelta(2, id="call_c", arguments="{}"),
        ToolCallDelta(3, name="read", arguments=json.dumps({"path": "a"}), source="excel"),
    ]
    for piece in pieces:
        collector.add(piece)
    repaired, unreadable, unnamed, from_text = collector.calls()

    assert (repaired.call.id, repaired.call.arguments, repaired.problem) == (
        "call_a",
        {"expression": "1 + 1"},
        None,
    )
    assert unreadable.call.id == "call_b"
    assert unreadable.problem is not None
    assert "could not be read" in unreadable.problem
    assert "expression is 2 + 2" in unreadable.problem
    assert unnamed.problem is not None
    assert "no tool name" in unnamed.problem
    assert (from_text.call.source, from_text.call.arguments, from_text.problem) == (
        "excel",
        {"path": "a"},
        None,
    )
    assert from_text.call.id.startswith("call_")
