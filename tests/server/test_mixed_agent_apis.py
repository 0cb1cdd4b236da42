"""Mixed tools on `/v1/messages` and `/v1/responses`, as on chat completions: `model` names an agent
with an MCP server (tests/servers/basic.py over stdio) and the client sends its own tools too. The agent
runs its tool server-side, the client's call comes back as a `tool_use` block / `function_call` item, and
the run resumes when the client sends the result with the conversation as it came. The official
`anthropic` and `openai` SDKs against `toolbridge serve`, a scripted model behind it, streamed and not."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anthropic
import pytest
from server_helpers import serve_in_thread

from server_paths import test_server_path
from toolbridge.store import Store
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

BASIC = {"command": sys.executable, "args": [test_server_path("basic")]}
QUESTION = "Echo 'from the server', then tell me the weather in Paris."
WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CLIENT_RESULT = "sunny, 21 C"
ANSWER = "The server said 'from the server', and Paris is sunny, 21 C."


def sees_both_results(request: RecordedRequest) -> bool:
    """The resumed run's model request: the agent's own call and result, then the client's."""
    tool_texts = [str(m["content"]) for m in request.messages if m["role"] == "tool"]
    calls = [c["function"]["name"] for m in request.messages for c in m.get("tool_calls") or []]
    return (
        [m["role"] for m in request.messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
        and calls == ["echo", "get_weather"]
        and "from the server" in tool_texts[0]
        and tool_texts[1] == CLIENT_RESULT
    )


SCRIPT = [
    Turn.tool_calls(ToolCallSpec("echo", {"text": "from the server"})),
    Turn.tool_calls(ToolCallSpec("get_weather", {"city": "Paris"})),
    Turn.text(ANSWER, expect=sees_both_results),
]


def echo_calls(db_url: str) -> int:
    with Store(db_url) as store:
        return sum(stats.calls for stats in store.tool_stats() if stats.tool == "echo")


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_messages_the_agent_runs_its_tool_returns_the_clients_and_resumes(
    tmp_path: Path, streamed: bool
) -> None:
    weather: Any = {
        "name": "get_weather",
        "description": "The weather in a city.",
        "input_schema": WEATHER_SCHEMA,
    }
    ask: list[Any] = [{"role": "user", "content": QUESTION}]
    with (
        ScriptedModelServer(list(SCRIPT)) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"basic": BASIC}) as server,
    ):
        client = anthropic.Anthropic(base_url=server.url, api_key=server.token or "unused", max_retries=0)
        options: dict[str, Any] = {"model": "default", "max_tokens": 512, "tools": [weather]}
        if streamed:
            with client.messages.stream(messages=ask, **options) as stream:
                paused = stream.get_final_message()
        else:
            paused = client.messages.create(messages=ask, **options)
        assert paused.stop_reason == "tool_use"
        [call] = [block for block in paused.content if block.type == "tool_use"]
        assert (call.name, call.input) == ("get_weather", {"city": "Paris"})
        # The agent's own call shows as thinking, as activity does on chat completions.
        assert any(block.type == "thinking" and "→ echo" in block.thinking for block in paused.content)

        result = {"type": "tool_result", "tool_use_id": call.id, "content": CLIENT_RESULT}
        resumed: list[Any] = [
            *ask,
            {
                "role": "assistant",
                "content": [block.model_dump(exclude_none=True) for block in paused.content],
            },
            {"role": "user", "content": [result]},
        ]
        final = client.messages.create(messages=resumed, **options)

    assert final.stop_reason == "end_turn"
    assert [block.text for block in final.content if block.type == "text"] == [ANSWER]
    assert echo_calls(server.db_url) == 1  # ran server-side, once: not again on resuming


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_responses_the_agent_runs_its_tool_returns_the_clients_and_resumes(
    tmp_path: Path, streamed: bool
) -> None:
    weather: Any = {
        "type": "function",
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": WEATHER_SCHEMA,
    }
    with (
        ScriptedModelServer(list(SCRIPT)) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"basic": BASIC}) as server,
    ):
        client = server.openai()
        if streamed:
            with client.responses.stream(model="default", input=QUESTION, tools=[weather]) as stream:
                paused = stream.get_final_response()
        else:
            paused = client.responses.create(model="default", input=QUESTION, tools=[weather])
        [call] = [item for item in paused.output if item.type == "function_call"]
        assert (call.name, call.arguments) == ("get_weather", '{"city": "Paris"}')

        # As Codex does with `store: false`: the whole conversation, the output items as they came.
        resumed: list[Any] = [
            {"role": "user", "content": QUESTION},
            *(item.model_dump(exclude_none=True) for item in paused.output),
            {"type": "function_call_output", "call_id": call.call_id, "output": CLIENT_RESULT},
        ]
        final = client.responses.create(model="default", input=resumed, tools=[weather])

    assert final.output_text == ANSWER
    assert not [item for item in final.output if item.type == "function_call"]
    assert echo_calls(server.db_url) == 1
