"""Pass-through in every dialect the parser reads, and the conversation the client posts back: a
prompt-mode upstream gets its calls back as its own dialect's text and the results as `<tool_result>`
blocks; a native one gets native tool messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from passthrough_helpers import ASK, TOOLS, arguments_of, passthrough_server, system_text, upstream

from toolbridge.parsing import call_format, dialect_names, reading_format
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

RESULT = "Sunny, 21 °C"


def posted_back(message: Any) -> list[dict[str, Any]]:
    """The conversation a client sends after running the calls of `message` (a completion's message)."""
    calls = [
        {
            "id": c.id,
            "type": "function",
            "function": {"name": c.function.name, "arguments": c.function.arguments},
        }
        for c in message.tool_calls
    ]
    return [
        *ASK,
        {"role": "assistant", "content": message.content, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": RESULT} for c in calls),
    ]


@pytest.mark.parametrize("dialect", dialect_names())
def test_each_dialect_round_trips_through_the_client(tmp_path: Path, dialect: str) -> None:
    written = call_format(dialect).format_call("get_weather", {"city": "Paris"})
    sent_back: dict[str, Any] = {}

    def sees_its_call_and_the_result(request: RecordedRequest) -> bool:
        sent_back["messages"] = request.messages
        return True

    turns = [
        Turn.text(written),
        Turn.text("It is sunny in Paris.", expect=sees_its_call_and_the_result),
    ]
    with ScriptedModelServer(turns) as model:
        models = {"local": upstream(model, "prompt", dialect=dialect)}
        with passthrough_server(tmp_path, models) as server:
            client = server.openai()
            with client.chat.completions.stream(model="local", messages=ASK, tools=TOOLS) as stream:  # type: ignore[arg-type]
                first = stream.get_final_completion()
            second = client.chat.completions.create(
                model="local",
                messages=posted_back(first.choices[0].message),  # type: ignore[arg-type]
                tools=TOOLS,  # type: ignore[arg-type]
            )

    [call] = first.choices[0].message.tool_calls or []
    assert call.function.name == "get_weather"
    assert arguments_of(call) == {"city": "Paris"}
    assert first.choices[0].finish_reason == "tool_calls"
    # The convention in the system prompt is the configured dialect's.
    example = call_format(dialect).format_call("get_weather", {"city": "example"})
    assert example[: example.index("get_weather")] in system_text(model.requests[0])

    assert second.choices[0].message.content == "It is sunny in Paris."
    assert second.choices[0].finish_reason == "stop"
    # Back upstream: the call in the dialect's own words, the result in a <tool_result> block.
    *_, assistant, results = sent_back["messages"]
    assert assistant["role"] == "assistant"
    assert written in assistant["content"]
    assert "tool_calls" not in assistant
    assert results["role"] == "user"
    assert results["content"] == f'<tool_result name="get_weather" id="{call.id}">{RESULT}</tool_result>'


@pytest.mark.parametrize("name", ["Hermes-3-Llama-3.1-8B", "QwQ-32B"])
def test_a_configured_dialect_reads_the_upstream_whatever_its_name(tmp_path: Path, name: str) -> None:
    # A Llama 3 fine-tune served under a Hermes (or a thinking Hermes) name: the name's profile would read
    # its text as Hermes, and QwQ's as reasoning opened by the prompt; the config says what it writes.
    written = "I'll check. " + call_format("llama3_json").format_call("get_weather", {"city": "Paris"})
    with ScriptedModelServer([Turn.text(written)] * 2, model_name=name) as model:
        models = {"local": upstream(model, dialect="llama3_json")}
        with passthrough_server(tmp_path, models) as server:
            client = server.openai()
            whole = client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
            with client.chat.completions.stream(model="local", messages=ASK, tools=TOOLS) as stream:  # type: ignore[arg-type]
                streamed = stream.get_final_completion()

    for completion in (whole, streamed):
        [call] = completion.choices[0].message.tool_calls or []
        assert (call.function.name, arguments_of(call)) == ("get_weather", {"city": "Paris"})
        assert completion.choices[0].message.content == "I'll check. "  # as written, before the call
        assert not getattr(completion.choices[0].message, "reasoning_content", None)


def test_a_model_without_a_profile_is_read_in_every_dialect_auto_reads(tmp_path: Path) -> None:
    dialects = [dialect for dialect in dialect_names() if reading_format(dialect) == "auto"]
    written = [call_format(dialect).format_call("get_weather", {"city": "Paris"}) for dialect in dialects]
    turns = [Turn.text(f"On it.\n{text}") for text in written]
    with (
        ScriptedModelServer(turns, model_name="acme-assistant-7b") as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        client = server.openai()
        completions = [
            client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
            for _ in turns
        ]

    read = [
        [(c.function.name, arguments_of(c)) for c in done.choices[0].message.tool_calls or []]
        for done in completions
    ]
    assert read == [[("get_weather", {"city": "Paris"})]] * len(dialects), dict(
        zip(dialects, read, strict=True)
    )


def test_a_native_upstream_gets_native_tool_messages_back(tmp_path: Path) -> None:
    call = ToolCallSpec("get_weather", {"city": "Paris"})
    turns = [Turn.tool_calls(call), Turn.text("It is sunny in Paris.")]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        client = server.openai()
        first = client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
        second = client.chat.completions.create(
            model="local",
            messages=posted_back(first.choices[0].message),  # type: ignore[arg-type]
            tools=TOOLS,  # type: ignore[arg-type]
        )

    assert second.choices[0].message.content == "It is sunny in Paris."
    *_, assistant, result = model.requests[1].messages
    assert assistant["tool_calls"] == [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert result == {"role": "tool", "tool_call_id": call.id, "content": RESULT}


def test_system_developer_and_content_parts_reach_the_upstream(tmp_path: Path) -> None:
    image = "data:image/png;base64,iVBORw0KGgo="
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "developer", "content": [{"type": "text", "text": "Use metric units."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather where this was taken?"},
                {"type": "image_url", "image_url": {"url": image}},
            ],
        },
    ]
    with (
        ScriptedModelServer([Turn.text("Paris, sunny.")]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        server.openai().chat.completions.create(model="local", messages=messages, tools=TOOLS)  # type: ignore[arg-type]

    [request] = model.requests
    system = system_text(request)
    assert system.startswith("Be brief.\n\nUse metric units.")
    user = request.messages[-1]
    assert user["content"][0] == {"type": "text", "text": "Weather where this was taken?"}
    assert user["content"][1] == {"type": "image_url", "image_url": {"url": image}}
