"""Values a model can write but nothing can encode are data, never crashes (issue 9, item 4).

A lone UTF-16 surrogate, an integer of thousands of digits, arguments nested 100,000 levels deep: each
call comes back to the model as an `invalid_arguments` result it can act on, lone surrogates in its text
become U+FFFD, and the run (and the next request, which carries all of it) goes on. Through the real
OpenAI wire: the scripted model sends exactly these bytes."""

from __future__ import annotations

import pytest
from agent_helpers import scripted_agent, tool_messages

from toolbridge.models import ToolMode
from toolbridge.testing import ToolCallSpec, Turn
from toolbridge.types import ToolMessage

pytestmark = pytest.mark.anyio

DEEP = 100_000

HOSTILE_ARGUMENTS = {
    "lone surrogate": ('{"expression": "1 + \\ud800"}', "lone UTF-16 surrogate"),
    "lone surrogate in a key": ('{"expression": "1", "\\udc00": 2}', "lone UTF-16 surrogate"),
    "5,000-digit integer": ('{"expression": ' + "7" * 5000 + "}", "more than 4300 digits"),
    "nested 100,000 levels": ('{"expression": ' + "[" * DEEP + "]" * DEEP + "}", "nested too deeply"),
    "nested 150 levels": ('{"expression": ' + "[" * 150 + "]" * 150 + "}", "nested more than 100 levels"),
}


@pytest.mark.parametrize("tool_mode", ["native", "prompt"])
@pytest.mark.parametrize("case", HOSTILE_ARGUMENTS, ids=list(HOSTILE_ARGUMENTS))
async def test_unencodable_arguments_come_back_as_invalid_arguments(case: str, tool_mode: ToolMode) -> None:
    arguments, reason = HOSTILE_ARGUMENTS[case]
    call = ToolCallSpec("calculate", arguments, id="call_hostile")
    whole = len(arguments) + 100  # one chunk: 200,000 characters in small ones would only be slow
    if tool_mode == "native":
        first = Turn.tool_calls(call, chunk_size=whole)
    else:
        first = Turn.calls_in_text(call, chunk_size=whole)
    turns = [first, Turn.text("I will write plain arguments.")]
    async with scripted_agent(turns, tools=[], tool_mode=tool_mode) as (agent, model):
        result = await agent.run("Compute it.")

    assert result.stop_reason == "final_answer", result.stop_detail
    assert result.output == "I will write plain arguments."
    results = [m.result for m in result.messages if isinstance(m, ToolMessage)]
    if tool_mode == "native":
        assert [r.error_kind for r in results] == ["invalid_arguments"]
        assert reason in results[0].text
        assert reason in tool_messages(model.requests[1])[0]["content"]
    else:  # the call could not be read: the model is told so in its own dialect
        assert results == []
        assert reason in model.requests[1].messages[-1]["content"]


async def test_a_lone_surrogate_in_the_text_becomes_a_replacement_character() -> None:
    turns = [
        Turn.reasoning("think \udfff").then_text("half \ud800 a character"),
        Turn.text("Fine."),
    ]
    async with scripted_agent(turns) as (agent, model):
        first = await agent.run("Say something odd.")
        second = await agent.run("And now?", history=first.messages)
    assert first.output == "half \ufffd a character"
    assert second.output == "Fine."
    assert model.requests[1].messages[-2] == {"role": "assistant", "content": "half \ufffd a character"}
