"""A real agent framework as the pass-through client: pydantic-ai's OpenAI chat model pointed at
`toolbridge serve`. pydantic-ai defines the tools, runs them when the calls come back, posts the results
and reads the answer, streamed (`run_stream_events`) and not (`run`); the scripted upstream behind serve
answers natively or in prompt mode with the calls written in its text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from passthrough_helpers import passthrough_server, upstream
from pydantic import BaseModel
from pydantic_ai import (
    Agent,
    AgentRunResultEvent,
    FunctionToolCallEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
)
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import RunUsage

from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

QUESTION = "What's the weather in Paris?"
WEATHER = {"Paris": "21 C and sunny", "Lyon": "18 C and cloudy"}


class Weather(BaseModel):
    city: str
    temperature_c: int


@contextmanager
def pydantic_ai_agent(
    tmp_path: Path, model: ScriptedModelServer, tool_mode: str, **options: Any
) -> Iterator[tuple[Agent[None, Any], list[str]]]:
    """A pydantic-ai agent whose model is `local` on `toolbridge serve`, with one Python tool of its own,
    and the cities that tool was asked about."""
    with passthrough_server(tmp_path, {"local": upstream(model, tool_mode)}) as server:
        provider = OpenAIProvider(base_url=f"{server.url}/v1", api_key="unused")
        agent: Agent[None, Any] = Agent(OpenAIChatModel("local", provider=provider), **options)
        asked: list[str] = []

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """The current weather in a city."""
            asked.append(city)
            return WEATHER[city]

        yield agent, asked


def tool_result_posted(mode: str, *texts: str) -> Callable[[RecordedRequest], bool]:
    """The upstream's check that the client's tool results reached it, in the form its mode uses."""

    def check(request: RecordedRequest) -> bool:
        if mode == "native":
            results = [m["content"] for m in request.messages if m["role"] == "tool"]
        else:  # prompt mode: the results come back as <tool_result> blocks in a user message
            results = (
                [request.last_message["content"]]
                if "<tool_result" in str(request.last_message["content"])
                else []
            )
        return all(any(text in str(result) for result in results) for text in texts)

    return check


def asking(mode: str, *calls: ToolCallSpec, before: str = "Checking. ") -> Turn:
    """The upstream's first reply: the calls, natively or written in Hermes markup in its text."""
    if mode == "native":
        return Turn.text(before).then_tool_calls(*calls).with_usage(30, 9)
    return Turn.calls_in_text(*calls, before=before).with_usage(30, 9)


async def run_streamed(agent: Agent[None, Any], prompt: str) -> tuple[Any, list[str], list[str], RunUsage]:
    """The agent run through pydantic-ai's event stream: its output, the text deltas it streamed, the
    tools it ran (in order), and its usage."""
    texts: list[str] = []
    ran: list[str] = []
    async with agent.run_stream_events(prompt) as events:
        async for event in events:
            if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                texts.append(event.part.content)
            elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                texts.append(event.delta.content_delta)
            elif isinstance(event, FunctionToolCallEvent):
                ran.append(event.part.tool_name)
            elif isinstance(event, AgentRunResultEvent):
                return event.result.output, texts, ran, event.result.usage
    raise AssertionError("the run ended without a result")


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("mode", ["native", "prompt"])
def test_pydantic_ai_runs_its_tool_and_answers_with_the_result(
    tmp_path: Path, mode: str, streamed: bool
) -> None:
    answer = "It is 21 C and sunny in Paris."
    script = [
        asking(mode, ToolCallSpec("get_weather", {"city": "Paris"})),
        Turn.text(answer, expect=tool_result_posted(mode, "21 C and sunny")).with_usage(40, 6),
    ]
    with ScriptedModelServer(script) as model, pydantic_ai_agent(tmp_path, model, mode) as (agent, asked):
        if streamed:
            output, texts, ran, usage = anyio.run(run_streamed, agent, QUESTION)
            assert ran == ["get_weather"]
            # Streamed as it was written: the answer came in several deltas, after the first reply's text.
            assert "".join(texts) == "Checking. " + answer  # the space before the call kept
            assert len(texts) > 2
        else:
            result = agent.run_sync(QUESTION)
            output, usage = result.output, result.usage

    assert output == answer
    assert asked == ["Paris"]
    assert (usage.requests, usage.input_tokens, usage.output_tokens) == (2, 70, 15)
    first = model.requests[0]
    if mode == "native":
        assert first.tool_names == ["get_weather"]
    else:
        assert first.tools == []
        assert "## get_weather" in str(first.messages[0]["content"])


def test_pydantic_ai_structured_output_comes_through_its_output_tool_in_prompt_mode(tmp_path: Path) -> None:
    """pydantic-ai asks for a structured output with a `final_result` tool and `tool_choice: required`;
    a prompt-mode upstream makes two calls of the client's tool in one reply, then the output call."""
    paris, lyon = (
        ToolCallSpec("get_weather", {"city": "Paris"}),
        ToolCallSpec("get_weather", {"city": "Lyon"}),
    )
    output = ToolCallSpec("final_result", {"city": "Paris", "temperature_c": 21})
    script = [
        Turn.calls_in_text(paris, lyon),
        Turn.calls_in_text(output, expect=tool_result_posted("prompt", "21 C and sunny", "18 C and cloudy")),
    ]
    with (
        ScriptedModelServer(script) as model,
        pydantic_ai_agent(tmp_path, model, "prompt", output_type=Weather) as (agent, asked),
    ):
        result = agent.run_sync(QUESTION)

    assert result.output == Weather(city="Paris", temperature_c=21)
    assert sorted(asked) == ["Lyon", "Paris"]  # pydantic-ai runs the two calls concurrently
    # tool_choice `required` reached the prompt-mode upstream as an instruction.
    assert "you must call at least one of the tools" in str(model.requests[0].messages[0]["content"])
