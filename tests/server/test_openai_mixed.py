"""Mixed runs: `model` names an agent with an MCP server (tests/servers/basic.py over stdio) and the
client sends `tools` too. The agent runs its own tool server-side, returns the client's call as OpenAI
`tool_calls`, and resumes when the client posts the result back: the `openai` SDK against
`toolbridge serve`, a scripted model behind it, streamed and not."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import openai
import pytest
from server_helpers import serve_in_thread

from server_paths import test_server_path
from toolbridge.store import Store
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

BASIC = {"command": sys.executable, "args": [test_server_path("basic")]}
QUESTION: list[Any] = [
    {"role": "user", "content": "Echo 'from the server', then tell me the weather in Paris."}
]
WEATHER_TOOL: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city, from the client's own service.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CLIENT_RESULT = "sunny, 21 C"


def ends_with_results(*texts: str) -> Any:
    """The request ends with tool messages carrying `texts`, in order."""

    def check(request: RecordedRequest) -> bool:
        results = []
        for message in reversed(request.messages):
            if message["role"] != "tool":
                break
            results.insert(0, str(message["content"]))
        return len(results) == len(texts) and all(
            text in got for text, got in zip(texts, results, strict=True)
        )

    return check


def sees_both_results(request: RecordedRequest) -> bool:
    roles = [m["role"] for m in request.messages]
    tool_texts = [str(m["content"]) for m in request.messages if m["role"] == "tool"]
    calls = [c["function"]["name"] for m in request.messages for c in m.get("tool_calls") or []]
    return (
        roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
        and calls == ["echo", "get_weather"]
        and "from the server" in tool_texts[0]
        and tool_texts[1] == CLIENT_RESULT
    )


def script() -> list[Turn]:
    return [
        Turn.tool_calls(ToolCallSpec("echo", {"text": "from the server"})),
        Turn.tool_calls(
            ToolCallSpec("get_weather", {"city": "Paris"}), expect=ends_with_results("from the server")
        ),
        Turn.text("The server said 'from the server', and Paris is sunny, 21 C.", expect=sees_both_results),
    ]


def echo_calls(db_url: str) -> int:
    with Store(db_url) as store:
        return sum(stats.calls for stats in store.tool_stats() if stats.tool == "echo")


def test_the_agent_runs_its_tool_returns_the_client_call_and_resumes_with_its_result(tmp_path: Path) -> None:
    with (
        ScriptedModelServer(script()) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"basic": BASIC}) as server,
    ):
        client = server.openai()
        paused = client.chat.completions.create(model="default", messages=QUESTION, tools=[WEATHER_TOOL])
        choice = paused.choices[0]
        assert choice.finish_reason == "tool_calls"
        [call] = choice.message.tool_calls or []
        assert call.type == "function"
        assert call.function.name == "get_weather"
        assert call.function.arguments == '{"city": "Paris"}'
        # The agent's own call shows as activity, as in any run.
        assert "→ echo" in (choice.message.model_extra or {})["reasoning_content"]

        messages = [
            *QUESTION,
            choice.message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": CLIENT_RESULT},
        ]
        final = client.chat.completions.create(model="default", messages=messages, tools=[WEATHER_TOOL])

    assert final.choices[0].finish_reason == "stop"
    assert final.choices[0].message.content == "The server said 'from the server', and Paris is sunny, 21 C."
    assert final.choices[0].message.tool_calls is None
    offered = {tool["function"]["name"] for tool in model.requests[0].body["tools"]}
    assert {"echo", "get_weather", "calculate"} <= offered
    assert echo_calls(server.db_url) == 1  # ran server-side, once: not again on resuming


def test_streamed_the_client_call_comes_as_tool_call_deltas_and_the_run_resumes(tmp_path: Path) -> None:
    with (
        ScriptedModelServer(script()) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"basic": BASIC}) as server,
    ):
        client = server.openai()
        with client.chat.completions.stream(
            model="default", messages=QUESTION, tools=[WEATHER_TOOL]
        ) as stream:
            paused = stream.get_final_completion()
        chunks = list(
            client.chat.completions.create(
                model="default",
                messages=[
                    *QUESTION,
                    paused.choices[0].message.model_dump(exclude_none=True, exclude={"parsed"}),
                    {
                        "role": "tool",
                        "tool_call_id": (paused.choices[0].message.tool_calls or [])[0].id,
                        "content": CLIENT_RESULT,
                    },
                ],
                tools=[WEATHER_TOOL],
                stream=True,
            )
        )

    choice = paused.choices[0]
    assert choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls or []
    assert call.function.name == "get_weather"
    assert call.function.arguments == '{"city": "Paris"}'
    answer = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert answer == "The server said 'from the server', and Paris is sunny, 21 C."
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "stop"
    ]
    assert len(model.requests) == 3
    assert echo_calls(server.db_url) == 1


def test_streamed_tool_call_deltas_have_openai_shape(tmp_path: Path) -> None:
    turns = [Turn.tool_calls(ToolCallSpec("get_weather", {"city": "Paris"}))]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        chunks = list(
            server.openai().chat.completions.create(
                model="default", messages=QUESTION, tools=[WEATHER_TOOL], stream=True
            )
        )

    deltas = [c.choices[0].delta.tool_calls for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    first, arguments = (d[0] for d in deltas)
    assert (first.index, first.type, first.function and first.function.name) == (0, "function", "get_weather")
    assert first.id
    assert (arguments.index, arguments.id, arguments.function and arguments.function.arguments) == (
        0,
        None,
        '{"city": "Paris"}',
    )
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def test_a_client_tool_named_like_an_agent_tool_is_namespaced_for_the_model_only(tmp_path: Path) -> None:
    client_echo: Any = {"type": "function", "function": {"name": "echo", "description": "The client's echo."}}
    turns = [Turn.tool_calls(ToolCallSpec("client__echo", {"text": "hi"}))]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, mcp_servers={"basic": BASIC}) as server,
    ):
        paused = server.openai().chat.completions.create(
            model="default", messages=QUESTION, tools=[client_echo]
        )

    [call] = paused.choices[0].message.tool_calls or []
    assert call.function.name == "echo"  # the client's name for its tool
    offered = {tool["function"]["name"]: tool for tool in model.requests[0].body["tools"]}
    assert offered["client__echo"]["function"]["description"] == "The client's echo."
    assert "echo" in offered  # the server's own
    assert echo_calls(server.db_url) == 0


def test_a_changed_step_record_or_a_result_for_no_call_is_a_400(tmp_path: Path) -> None:
    with ScriptedModelServer([]) as model, serve_in_thread(tmp_path, model) as server:
        client = server.openai()
        damaged = {"role": "assistant", "content": '<!-- toolbridge:steps {"v": 1, "messages": 7} -->'}
        with pytest.raises(openai.BadRequestError) as changed:
            client.chat.completions.create(model="default", messages=[*QUESTION, damaged, *QUESTION])
        deep = {"role": "assistant", "content": '<!-- toolbridge:steps {"v": ' + "[" * 100_000 + "} -->"}
        with pytest.raises(openai.BadRequestError) as nested:
            client.chat.completions.create(model="default", messages=[*QUESTION, deep, *QUESTION])
        orphan = {"role": "tool", "tool_call_id": "call_nobody_made", "content": "42"}
        with pytest.raises(openai.BadRequestError) as unanswered:
            client.chat.completions.create(model="default", messages=[*QUESTION, orphan])

    assert "send the assistant messages back exactly as they came" in str(changed.value)
    assert "cannot be read" in str(nested.value)
    assert "answers no call of the conversation" in str(unanswered.value)
    assert model.requests == []


def test_a_prompt_mode_agent_pauses_and_resumes_the_same_way(tmp_path: Path) -> None:
    def sees(*texts: str) -> Any:
        def check(request: RecordedRequest) -> bool:
            said = "\n".join(str(m.get("content")) for m in request.messages)
            return "get_weather" in str(request.messages[0]["content"]) and all(t in said for t in texts)

        return check

    turns = [
        Turn.calls_in_text(ToolCallSpec("echo", {"text": "from the server"})),
        Turn.calls_in_text(ToolCallSpec("get_weather", {"city": "Paris"}), expect=sees("from the server")),
        Turn.text("Both known.", expect=sees("from the server", CLIENT_RESULT)),
    ]
    agents = {"prompted": {"tool_mode": "prompt"}}
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, agents=agents, mcp_servers={"basic": BASIC}) as server,
    ):
        client = server.openai()
        paused = client.chat.completions.create(model="prompted", messages=QUESTION, tools=[WEATHER_TOOL])
        [call] = paused.choices[0].message.tool_calls or []
        messages = [
            *QUESTION,
            paused.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": CLIENT_RESULT},
        ]
        final = client.chat.completions.create(model="prompted", messages=messages, tools=[WEATHER_TOOL])

    assert call.function.name == "get_weather"
    assert "<tool_call>" not in (paused.choices[0].message.content or "")
    assert final.choices[0].message.content == "Both known."
    assert "tools" not in model.requests[0].body  # the catalog is in the prompt
    assert echo_calls(server.db_url) == 1


def test_tool_choice_none_keeps_the_client_tools_from_the_model(tmp_path: Path) -> None:
    turns = [Turn.text("No tools needed.")]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        completion = server.openai().chat.completions.create(
            model="default", messages=QUESTION, tools=[WEATHER_TOOL], tool_choice="none"
        )

    assert completion.choices[0].message.content == "No tools needed."
    offered = {tool["function"]["name"] for tool in model.requests[0].body["tools"]}
    assert "calculate" in offered
    assert "get_weather" not in offered


def test_a_client_tool_with_a_broken_schema_or_named_twice_is_a_400(tmp_path: Path) -> None:
    broken: Any = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "objekt"}}}
    with ScriptedModelServer([]) as model, serve_in_thread(tmp_path, model) as server:
        client = server.openai()
        with pytest.raises(openai.BadRequestError) as schema:
            client.chat.completions.create(model="default", messages=QUESTION, tools=[broken])
        with pytest.raises(openai.BadRequestError) as twice:
            client.chat.completions.create(model="default", messages=QUESTION, tools=[WEATHER_TOOL] * 2)

    assert "the parameters of tool 'get_weather' are not a valid JSON Schema" in str(schema.value)
    assert "two tools are named 'get_weather'" in str(twice.value)
    assert model.requests == []
