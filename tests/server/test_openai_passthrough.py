"""Pass-through: `model` names a model, the client's `tools` come back as OpenAI `tool_calls` for the
client to run. The official `openai` client drives `toolbridge serve`; scripted upstreams answer over
the real OpenAI wire, natively or with calls written in their text."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openai
import pytest
from passthrough_helpers import ASK, TOOLS, arguments_of, passthrough_server, system_text, upstream

from toolbridge.agent import AgentDefinition
from toolbridge.server.openai.client_tools import MAX_CLIENT_TOOLS
from toolbridge.store import Store
from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn


def test_native_upstream_calls_come_back_as_tool_calls(tmp_path: Path) -> None:
    call = ToolCallSpec("get_weather", {"city": "Paris"})
    turn = Turn.text("Let me look.").then_tool_calls(call).with_usage(12, 7)
    with (
        ScriptedModelServer([turn]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Let me look."
    [returned] = choice.message.tool_calls or []
    assert returned.id == call.id
    assert returned.type == "function"
    assert returned.function.name == "get_weather"
    assert arguments_of(returned) == {"city": "Paris"}
    assert completion.model == "local"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == 12
    # The upstream got the client's tools natively, and none of toolbridge's own.
    [request] = model.requests
    assert request.tool_names == ["get_weather", "get_time"]
    assert request.messages[-1] == {"role": "user", "content": "What's the weather in Paris?"}


def test_hermes_text_calls_come_back_as_tool_calls_streamed(tmp_path: Path) -> None:
    call = ToolCallSpec("get_weather", {"city": "Paris", "days": 2})
    turn = Turn.calls_in_text(call, before="Checking. ").then_text(" and some rambling after the call")
    with (
        ScriptedModelServer([turn]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "prompt")}) as server,
    ):
        chunks = list(
            server.openai().chat.completions.create(
                model="local",
                messages=ASK,  # type: ignore[arg-type]
                tools=TOOLS,  # type: ignore[arg-type]
                stream=True,
                stream_options={"include_usage": True},
            )
        )

    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert deltas[0].role == "assistant"
    assert "".join(d.content or "" for d in deltas) == "Checking. "  # as written, space and all
    pieces = [piece for d in deltas for piece in d.tool_calls or []]
    first, *rest = pieces
    # OpenAI's shape: index, id, type and name first; then argument fragments under the same index.
    assert first.index == 0
    assert first.id
    assert first.type == "function"
    assert first.function is not None
    assert first.function.name == "get_weather"
    assert all(p.index == 0 and p.id is None and p.function and p.function.name is None for p in rest)
    arguments = "".join(p.function.arguments or "" for p in pieces if p.function)
    assert json.loads(arguments) == {"city": "Paris", "days": 2}
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "tool_calls"
    ]
    assert chunks[-1].usage is not None
    assert not chunks[-1].choices
    # Prompt mode: no native tools; the catalog and the calling convention are in the system prompt.
    [request] = model.requests
    assert request.tools == []
    assert "## get_weather" in system_text(request)
    assert "<tool_call>" in system_text(request)


CALL = ToolCallSpec("get_weather", {"city": "Paris"})


@pytest.mark.parametrize(
    ("tool_mode", "turn", "content"),
    [
        # What a native API answers (direct, LiteLLM): the text as written, then the call.
        ("native", Turn.text("Let me check. ", chunk_size=3).then_tool_calls(CALL), "Let me check. "),
        # Text around a call written in the text: what comes before it, as written. (Text after the
        # calls ends the reply: the model went on without their results; white space after them is
        # the template's.)
        (
            "prompt",
            Turn.calls_in_text(CALL, before="Checking  the weather:\n\n", chunk_size=3).then_text("\n"),
            "Checking  the weather:\n\n",
        ),
    ],
)
def test_text_reaches_the_client_byte_for_byte_outside_the_calls(
    tmp_path: Path, tool_mode: str, turn: Turn, content: str
) -> None:
    with (
        ScriptedModelServer([turn, turn]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, tool_mode)}) as server,
    ):
        client = server.openai()
        whole = client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
        chunks = list(client.chat.completions.create(model="local", messages=ASK, tools=TOOLS, stream=True))  # type: ignore[arg-type]

    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert [len(whole.choices[0].message.tool_calls or []), whole.choices[0].message.content] == [1, content]
    assert streamed == content


def test_stream_helper_accumulates_the_calls(tmp_path: Path) -> None:
    calls = [ToolCallSpec("get_weather", {"city": "Paris"}), ToolCallSpec("get_time", {"city": "Paris"})]
    with (
        ScriptedModelServer([Turn.tool_calls(*calls, chunk_size=3)]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
        server.openai().chat.completions.stream(model="local", messages=ASK, tools=TOOLS) as stream,  # type: ignore[arg-type]
    ):
        final = stream.get_final_completion()

    message = final.choices[0].message
    assert final.choices[0].finish_reason == "tool_calls"
    assert message.content is None
    assert [(c.id, c.function.name, arguments_of(c)) for c in message.tool_calls or []] == [
        (calls[0].id, "get_weather", {"city": "Paris"}),
        (calls[1].id, "get_time", {"city": "Paris"}),
    ]


def test_a_plain_answer_is_a_plain_completion(tmp_path: Path) -> None:
    with (
        ScriptedModelServer([Turn.reasoning("Easy.").then_text("It is sunny.")]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK)  # type: ignore[arg-type]

    message = completion.choices[0].message
    assert message.content == "It is sunny."
    assert message.tool_calls is None
    assert (message.model_extra or {})["reasoning_content"] == "Easy."
    assert completion.choices[0].finish_reason == "stop"


def test_sampling_and_format_fields_are_passed_on_and_unknown_ones_ignored(tmp_path: Path) -> None:
    response_format = {
        "type": "json_schema",
        "json_schema": {
            "name": "weather",
            "schema": {"type": "object", "properties": {"sky": {"type": "string"}}},
        },
    }
    with (
        ScriptedModelServer([Turn.text('{"sky": "clear"}'), Turn.text("ok")]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        client = server.openai()
        client.chat.completions.create(
            model="local",
            messages=ASK,  # type: ignore[arg-type]
            temperature=0.3,
            top_p=0.9,
            max_completion_tokens=200,
            stop=["\n\n"],
            seed=7,
            user="user-42",
            response_format=response_format,  # type: ignore[arg-type]
            logit_bias={"50256": -100},
            extra_body={"not_an_openai_field": {"ignored": True}},
        )
        client.chat.completions.create(
            model="local", messages=ASK, max_tokens=50, stop="END", response_format={"type": "json_object"}
        )  # type: ignore[arg-type]

    first, second = (request.body for request in model.requests)
    assert first["temperature"] == 0.3
    assert first["top_p"] == 0.9
    # Under the provider's name for it: OpenAI's is max_completion_tokens, whichever the client sent.
    assert first["max_completion_tokens"] == 200
    assert first["stop"] == ["\n\n"]
    assert first["seed"] == 7
    assert first["user"] == "user-42"
    assert first["response_format"] == response_format
    assert "logit_bias" not in first
    assert "not_an_openai_field" not in first
    assert second["max_completion_tokens"] == 50
    assert second["stop"] == ["END"]
    assert second["response_format"] == {"type": "json_object"}


def test_an_agent_name_wins_over_a_model_name(tmp_path: Path) -> None:
    with ScriptedModelServer([Turn.text("From the agent.")]) as model:
        models = {"local": upstream(model)}
        agents = {"local": {"model": "local", "instructions": "You are the agent."}}
        with passthrough_server(tmp_path, models, agents=agents) as server:
            client = server.openai()
            listed = [m.id for m in client.models.list().data]
            completion = client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]

    assert listed == ["default", "local"]
    assert completion.choices[0].message.content == "From the agent."
    # The agent ran: its instructions and its own tools, with the client's next to them (a mixed run).
    [request] = model.requests
    assert "You are the agent." in system_text(request)
    assert {"calculate", "get_weather"} <= set(request.tool_names)


def test_an_agent_stored_under_a_model_name_wins_too(tmp_path: Path) -> None:
    """Stored agents are looked up by name on each request (not listed whole), so one stored while the
    server runs takes the name over at once."""
    with (
        ScriptedModelServer([Turn.text("Passed through."), Turn.text("From the agent.")]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        client = server.openai()
        before = client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
        with Store(server.db_url) as store:
            store.create_agent(
                AgentDefinition(name="local", model="local", instructions="You are the agent.")
            )
        after = client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]

    assert before.choices[0].message.content == "Passed through."
    assert after.choices[0].message.content == "From the agent."
    passed, ran = model.requests
    assert "You are the agent." not in system_text(passed)
    assert "You are the agent." in system_text(ran)


def test_a_name_that_is_neither_an_agent_nor_a_model_is_a_404_naming_both(tmp_path: Path) -> None:
    with (
        ScriptedModelServer([]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
        pytest.raises(openai.NotFoundError) as missing,
    ):
        server.openai().chat.completions.create(model="gpt-9", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    body = missing.value.body
    assert isinstance(body, dict)
    assert body["code"] == "model_not_found"
    assert "the agents are: default" in body["message"]
    assert "configured models: local" in body["message"]


@pytest.mark.parametrize(
    ("fields", "param", "says"),
    [
        (
            {"tool_choice": {"type": "function", "function": {"name": "nope"}}},
            "tool_choice.function.name",
            "not among",
        ),
        ({"tool_choice": "required", "tools": []}, "tool_choice", "has no tools"),
        ({"tools": [TOOLS[0], TOOLS[0]]}, "tools.1.function.name", "two tools are named"),
        (
            {"tools": [{"type": "function", "function": {"name": f"t{n}"}} for n in range(513)]},
            "tools",
            "the request has 513 tools, but a request may bring at most 512",
        ),
        (
            {
                "tools": [
                    {"type": "function", "function": {"name": "t", "parameters": {"properties": {"a": 5}}}}
                ]
            },
            "tools.0.function.parameters",
            "not a valid JSON Schema: 5 is not of type 'object', 'boolean' (at properties/a)",
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}],
                    }
                ]
            },
            "messages.0.content.0.image_url.url",
            "data URL",
        ),
        (
            {"messages": [*ASK, {"role": "tool", "content": "orphan"}]},
            "messages.1.tool_call_id",
            "tool_call_id",
        ),
    ],
)
def test_requests_a_model_cannot_take_are_400s_naming_the_field(
    tmp_path: Path, fields: dict[str, Any], param: str, says: str
) -> None:
    with ScriptedModelServer([]) as model, passthrough_server(tmp_path, {"local": upstream(model)}) as server:
        answer = server.http().post(
            "/v1/chat/completions", json={"model": "local", "messages": ASK, "tools": TOOLS, **fields}
        )
    assert answer.status_code == 400, answer.text
    error = answer.json()["error"]
    assert error["param"] == param
    assert says in error["message"]
    assert model.requests == []


ODD_BUT_VALID_SCHEMAS = [
    {
        "type": "object",
        "properties": {"a": True, "b": False, "c": {"items": True, "anyOf": [True, {"type": "null"}]}},
    },
    {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"], "enum": [1, None, [2]], "default": {"x": 1}}},
    },
    {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"$ref": "#/$defs/x"}}},
    {"$ref": "#/nowhere"},
    {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"a": {"type": "integer", "exclusiveMinimum": True, "minimum": 1}},
    },
]


@pytest.mark.parametrize("tool_mode", ["native", "prompt"])
def test_odd_but_valid_client_schemas_reach_the_model(tmp_path: Path, tool_mode: str) -> None:
    tools = [
        {"type": "function", "function": {"name": f"tool_{n}", "parameters": schema}}
        for n, schema in enumerate(ODD_BUT_VALID_SCHEMAS)
    ]
    with (
        ScriptedModelServer([Turn.text("Fine.")]) as model,
        passthrough_server(tmp_path, {"local": upstream(model, tool_mode)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=tools)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "Fine."


def test_as_many_tools_as_a_request_may_bring_reach_the_model(tmp_path: Path) -> None:
    tools = [
        {"type": "function", "function": {**TOOLS[0]["function"], "name": f"tool_{n}"}}
        for n in range(MAX_CLIENT_TOOLS)
    ]
    with (
        ScriptedModelServer([Turn.tool_calls(ToolCallSpec("tool_511", {"city": "Paris"}))]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=tools)  # type: ignore[arg-type]
    [call] = completion.choices[0].message.tool_calls or []
    assert call.function.name == "tool_511"  # type: ignore[union-attr]
    assert len(model.requests[0].tools) == MAX_CLIENT_TOOLS


def test_an_upstream_failure_is_an_error_status_or_an_error_event_once_streaming(tmp_path: Path) -> None:
    turns = [Turn.error(500, "The upstream fell over."), Turn.text("Let me").then_stream_error("overloaded")]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        client = server.openai()
        with pytest.raises(openai.APIStatusError) as before:
            client.chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
        received: list[str] = []
        with pytest.raises(openai.APIError) as during:  # noqa: PT012 - the chunks before the error count
            for chunk in client.chat.completions.create(
                model="local", messages=ASK, tools=TOOLS, stream=True
            ):  # type: ignore[arg-type]
                received.append(chunk.choices[0].delta.content or "")
    assert before.value.status_code == 502
    assert "The upstream fell over." in str(before.value)
    assert "".join(received) == "Let me"
    assert "overloaded" in str(during.value)


def test_markup_a_native_upstream_leaked_into_its_text_comes_back_as_tool_calls(tmp_path: Path) -> None:
    # vLLM or Ollama without a tool parser for the model: the call arrives as text in `content`.
    leaked = Turn.calls_in_text(ToolCallSpec("get_weather", {"city": "Paris"}), before="On it.\n")
    with (
        ScriptedModelServer([leaked]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    message = completion.choices[0].message
    assert message.content == "On it.\n"
    [call] = message.tool_calls or []
    assert arguments_of(call) == {"city": "Paris"}
    assert completion.choices[0].finish_reason == "tool_calls"
    assert model.requests[0].tool_names == ["get_weather", "get_time"]  # it was offered them natively


def test_an_inline_provider_model_name_is_passed_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    call = ToolCallSpec("get_time", {"city": "Paris"})
    with ScriptedModelServer([Turn.tool_calls(call)], model_name="qwen3:8b") as model:
        monkeypatch.setenv("OLLAMA_HOST", model.base_url.removesuffix("/v1"))
        with passthrough_server(tmp_path, {}) as server:
            completion = server.openai().chat.completions.create(
                model="ollama:qwen3:8b", messages=ASK, tools=TOOLS
            )  # type: ignore[arg-type]
    assert (completion.choices[0].message.tool_calls or [])[0].id == call.id
    assert completion.model == "ollama:qwen3:8b"
    assert model.requests[0].model == "qwen3:8b"


def test_call_ids_a_model_reuses_are_made_unique(tmp_path: Path) -> None:
    earlier = [
        *ASK,
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "noon"},
    ]
    twice = Turn.tool_calls(
        ToolCallSpec("get_weather", {"city": "Paris"}, id="call_0"),
        ToolCallSpec("get_weather", {"city": "Rome"}, id="call_0"),
    )
    with (
        ScriptedModelServer([twice]) as model,
        passthrough_server(tmp_path, {"local": upstream(model)}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=earlier, tools=TOOLS)  # type: ignore[arg-type]
    ids = [call.id for call in completion.choices[0].message.tool_calls or []]
    assert len(ids) == 2
    assert len({*ids, "call_0"}) == 3


def test_a_model_that_cannot_be_built_is_a_503_saying_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PASSTHROUGH_TEST_KEY", raising=False)
    keyless = {"provider": "openai", "model": "gpt-4o-mini", "api_key": "${PASSTHROUGH_TEST_KEY}"}
    with passthrough_server(tmp_path, {"hosted": keyless}) as server:
        answer = server.http().post(
            "/v1/chat/completions", json={"model": "hosted", "messages": ASK, "tools": TOOLS}
        )
    assert answer.status_code == 503
    error = answer.json()["error"]
    assert error["param"] == "model"
    assert "model 'hosted' cannot be used" in error["message"]
    assert "PASSTHROUGH_TEST_KEY" in error["message"]


def test_an_upstream_that_refuses_tools_is_asked_in_prompt_mode_instead(tmp_path: Path) -> None:
    def offered_no_native_tools(request: RecordedRequest) -> bool:
        return request.tools == [] and "## get_weather" in system_text(request)

    turns = [
        Turn.error(400, "tools are not supported by this model"),
        Turn.calls_in_text(ToolCallSpec("get_weather", {"city": "Paris"}), expect=offered_no_native_tools),
    ]
    with (
        ScriptedModelServer(turns) as model,
        passthrough_server(tmp_path, {"local": upstream(model, "auto")}) as server,
    ):
        completion = server.openai().chat.completions.create(model="local", messages=ASK, tools=TOOLS)  # type: ignore[arg-type]
    [call] = completion.choices[0].message.tool_calls or []
    assert arguments_of(call) == {"city": "Paris"}
    assert model.requests[0].tool_names == ["get_weather", "get_time"]
