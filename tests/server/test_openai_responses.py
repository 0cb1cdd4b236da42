"""`/v1/responses`: OpenAI's Responses API in front of a configured model. The official `openai` SDK drives
`toolbridge serve`, streaming and not; scripted upstreams answer over the real OpenAI wire, natively or
with their calls leaked as text (Hermes, Qwen3 XML), which come back as `function_call` items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest
from passthrough_helpers import passthrough_server, system_text, upstream

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

WEATHER: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "description": "The current weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
CALL = ToolCallSpec("get_weather", {"city": "Paris"})
QWEN_XML = (
    "Let me look.<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
    "</tool_call>"
)


@pytest.mark.parametrize(
    ("tool_mode", "turn"),
    [
        ("native", Turn.text("Let me look.").then_tool_calls(CALL).with_usage(12, 7)),
        ("prompt", Turn.calls_in_text(CALL, before="Let me look.").with_usage(12, 7)),
        ("prompt", Turn.text(QWEN_XML).with_usage(12, 7)),
    ],
    ids=["native", "hermes-text", "qwen3-xml-text"],
)
def test_calls_come_back_as_function_call_items(tmp_path: Path, tool_mode: str, turn: Turn) -> None:
    with (
        ScriptedModelServer([turn]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, tool_mode)}) as server,
    ):
        response = server.openai().responses.create(
            model="local",
            instructions="Be brief.",
            input="Weather in Paris?",
            tools=[WEATHER],  # type: ignore[list-item]
        )

    message, call = response.output
    assert message.type == "message"
    assert response.output_text == "Let me look."
    assert call.type == "function_call"
    assert (call.name, call.arguments) == ("get_weather", '{"city": "Paris"}')
    assert response.usage is not None
    assert response.usage.input_tokens == 12
    assert system_text(model.requests[0]).startswith("Be brief.")


def test_a_stream_and_a_following_turn_with_the_calls_output(tmp_path: Path) -> None:
    turns = [
        Turn.calls_in_text(CALL, before="Checking."),
        Turn.reasoning("It said sunny.").then_text("Sunny."),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        client = server.openai()
        with client.responses.stream(model="local", input="Weather in Paris?", tools=[WEATHER]) as stream:  # type: ignore[list-item]
            kinds = [event.type for event in stream]
            first = stream.get_final_response()
        [call] = [item for item in first.output if item.type == "function_call"]
        follow_up: list[Any] = [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "type": "function_call",
                "call_id": call.call_id,
                "name": call.name,
                "arguments": call.arguments,
            },
            {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"},
        ]
        second = client.responses.create(model="local", input=follow_up, tools=[WEATHER])  # type: ignore[list-item,arg-type]

    assert kinds[0] == "response.created"
    assert kinds[-1] == "response.completed"
    assert "response.function_call_arguments.delta" in kinds
    assert first.output_text == "Checking."
    assert second.output_text == "Sunny."
    assert [item.type for item in second.output] == ["reasoning", "message"]
    assert model.requests[1].messages[-1]["content"].endswith("sunny") or "sunny" in str(
        model.requests[1].messages
    )


def test_unknown_models_are_refused(tmp_path: Path) -> None:
    with passthrough_server(tmp_path, {}) as server, pytest.raises(openai.NotFoundError) as unknown:
        server.openai().responses.create(model="nope", input="hi")
    assert "no model named 'nope'" in unknown.value.message


def test_an_input_item_the_sdks_types_refuse_is_a_400_naming_it(tmp_path: Path) -> None:
    broken: Any = [
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "function_call", "name": "get_weather", "arguments": "{}"},  # no call_id
    ]
    with (
        passthrough_server(tmp_path, {"local": {"provider": "demo"}}) as server,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        server.openai().responses.create(model="local", input=broken)
    assert "input.1 is not a valid function_call item: call_id: Field required" in refused.value.message
    assert refused.value.body["param"] == "input.1.call_id"  # type: ignore[index]


def test_a_stored_response_is_continued_by_its_id_and_an_unstored_one_is_not(tmp_path: Path) -> None:
    turns = [
        Turn.calls_in_text(CALL, before="Checking."),
        Turn.text("Sunny in Paris."),
        Turn.text("Not stored."),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        client = server.openai()
        first = client.responses.create(
            model="local",
            input="Weather in Paris?",
            instructions="Be brief.",
            tools=[WEATHER],  # type: ignore[list-item]
        )
        [call] = [item for item in first.output if item.type == "function_call"]
        # Only what is new: the call's output, naming the stored response it follows.
        output: Any = [{"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}]
        second = client.responses.create(
            model="local",
            input=output,
            previous_response_id=first.id,
            tools=[WEATHER],  # type: ignore[list-item]
        )
        unstored = client.responses.create(model="local", input="Hello?", store=False)
        with pytest.raises(openai.NotFoundError) as refused:
            client.responses.create(model="local", input="And?", previous_response_id=unstored.id)

    assert (first.store, second.store, unstored.store) == (True, True, False)
    assert second.previous_response_id == first.id
    assert second.output_text == "Sunny in Paris."
    resumed = model.requests[1]
    said = [(m["role"], str(m.get("content"))) for m in resumed.messages]
    assert said[1] == ("user", "Weather in Paris?")
    assert said[-1][1].endswith("sunny") or "sunny" in said[-1][1]
    assert any("get_weather" in str(m) for m in resumed.messages[2:-1])  # the stored call, before its output
    # Instructions belong to the request that gave them (as on OpenAI's API): not carried over.
    assert "Be brief." not in system_text(resumed)
    assert f"no stored response {unstored.id!r}" in refused.value.message
    assert len(model.requests) == 3  # the refused request reached no model


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_api_bench_runs_all_three_apis_and_prints_their_ratios() -> None:
    """(Its numbers are read by people, never asserted.)"""
    import os
    import subprocess
    import sys

    bench = Path(__file__).resolve().parents[2] / "bench" / "serve_apis.py"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, str(bench), "--requests", "8", "--concurrency", "4", "--rounds", "2"],
        capture_output=True, text=True, timeout=110, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    for side in ("chat completions", "messages", "responses"):
        assert f"  {side} " in done.stdout
    assert done.stdout.count("ratio latency") == 3
