"""`/v1/chat/completions` and `/v1/models`, driven by the official `openai` client against a running server,
with the scripted model behind the agent and a native tool call in the loop."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
from server_helpers import calculate_then_answer, serve_in_thread, tool_result_says

from toolbridge.testing import RecordedRequest, ScriptedModelServer, ToolCallSpec, Turn

QUESTION = [{"role": "user", "content": "What is 15 + 27?"}]


def test_non_streamed_answer_runs_the_tool_loop_and_shows_tool_activity(tmp_path: Path) -> None:
    with ScriptedModelServer(calculate_then_answer()) as model, serve_in_thread(tmp_path, model) as server:
        completion = server.openai().chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]

    message = completion.choices[0].message
    assert message.content == "The answer is 42."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.model == "default"
    activity = (message.model_extra or {})["reasoning_content"]
    assert '→ calculate {"expression": "15 + 27"}' in activity
    assert "✓ calculate" in activity
    assert activity.rstrip().endswith(": 42")
    # The agent offers its own tools (the client sent none).
    offered = {tool["function"]["name"] for tool in model.requests[0].body["tools"]}
    assert {"calculate", "get_current_time"} <= offered


def test_streamed_answer_has_text_tool_activity_usage_and_done(tmp_path: Path) -> None:
    with ScriptedModelServer(calculate_then_answer()) as model, serve_in_thread(tmp_path, model) as server:
        stream = server.openai().chat.completions.create(
            model="default",
            messages=QUESTION,  # type: ignore[arg-type]
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)

    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content", "") for c in chunks if c.choices
    )
    assert content == "The answer is 42."
    assert reasoning.startswith('→ calculate {"expression": "15 + 27"}\n✓ calculate ')
    # Activity comes before the answer, as it happened.
    first_text = next(i for i, c in enumerate(chunks) if c.choices and c.choices[0].delta.content)
    last_activity = max(
        i
        for i, c in enumerate(chunks)
        if c.choices and (c.choices[0].delta.model_extra or {}).get("reasoning_content")
    )
    assert last_activity < first_text
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "stop"
    ]
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens > 0


def test_tool_activity_can_be_switched_off(tmp_path: Path) -> None:
    turns = [*calculate_then_answer(), *calculate_then_answer()]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model, server={"tool_activity": False}) as server,
    ):
        client = server.openai()
        completion = client.chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]
        chunks = list(client.chat.completions.create(model="default", messages=QUESTION, stream=True))  # type: ignore[arg-type]

    assert completion.choices[0].message.content == "The answer is 42."
    assert "reasoning_content" not in (completion.choices[0].message.model_extra or {})
    assert not any(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content") for c in chunks if c.choices
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "The answer is 42."


def test_models_lists_the_agents_then_the_models(tmp_path: Path) -> None:
    agents = {"excel-helper": {"description": "Spreadsheets."}, "careful": {}}
    with ScriptedModelServer([]) as model, serve_in_thread(tmp_path, model, agents=agents) as server:
        models = server.openai().models.list()
    assert [m.id for m in models.data] == ["default", "excel-helper", "careful", "scripted"]


def test_history_and_system_messages_reach_the_model(tmp_path: Path) -> None:
    def sees_the_conversation(request: RecordedRequest) -> bool:
        roles = [m["role"] for m in request.messages]
        system = request.messages[0]["content"]
        return roles == ["system", "user", "assistant", "user"] and "Answer in French." in system

    turns = [Turn.text("Quarante-deux.", expect=sees_the_conversation)]
    messages = [
        {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "15 + 27?"},
    ]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        completion = server.openai().chat.completions.create(model="default", messages=messages)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "Quarante-deux."


def test_calls_needing_approval_are_declined_unless_auto_approve(tmp_path: Path) -> None:
    agents = {"default": {"approval": {"tools": {"calculate": "always"}}}}
    declined = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "2 + 2"})),
        Turn.text("I may not calculate.", expect=tool_result_says("needs the user's approval")),
    ]
    with ScriptedModelServer(declined) as model, serve_in_thread(tmp_path, model, agents=agents) as server:
        completion = server.openai().chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]
    assert "✗ calculate" in (completion.choices[0].message.model_extra or {})["reasoning_content"]

    approved = [
        Turn.tool_calls(ToolCallSpec("calculate", {"expression": "2 + 2"})),
        Turn.text("4.", expect=tool_result_says("4")),
    ]
    with (
        ScriptedModelServer(approved) as model,
        serve_in_thread(tmp_path, model, agents=agents, server={"auto_approve": True}) as server,
    ):
        completion = server.openai().chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]
    assert completion.choices[0].message.content == "4."


def test_bad_requests_get_clear_openai_errors(tmp_path: Path) -> None:
    with ScriptedModelServer([]) as model, serve_in_thread(tmp_path, model, agents={"helper": {}}) as server:
        with pytest.raises(openai.NotFoundError) as unknown:
            server.openai().chat.completions.create(model="gpt-4o", messages=QUESTION)  # type: ignore[arg-type]
        http = server.http()
        malformed = http.post(
            "/v1/chat/completions",
            content=b'{"model": "default", "messages": [',
            headers={"content-type": "application/json"},
        )
        missing = http.post("/v1/chat/completions", json={"model": "default"})
        not_user = http.post(
            "/v1/chat/completions",
            json={"model": "default", "messages": [{"role": "assistant", "content": "hi"}]},
        )
        bad_role = http.post(
            "/v1/chat/completions", json={"model": "default", "messages": [{"role": "robot"}]}
        )
        oversized = http.post(
            "/v1/chat/completions",
            json={"model": "default", "messages": [{"role": "user", "content": "x" * 1_100_000}]},
        )

    assert unknown.value.status_code == 404
    error = unknown.value.body
    assert isinstance(error, dict)
    assert error["code"] == "model_not_found"
    assert error["param"] == "model"
    assert "no agent named 'gpt-4o'" in error["message"]
    assert "default, helper" in error["message"]

    assert malformed.status_code == 400
    assert malformed.json()["error"]["code"] == "invalid_json"
    assert "not valid JSON" in malformed.json()["error"]["message"]

    assert missing.status_code == 400
    assert missing.json()["error"] == {
        "message": "missing required field 'messages'",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "missing",
    }
    assert not_user.status_code == 400
    assert "the last message must be the user's" in not_user.json()["error"]["message"]
    assert bad_role.status_code == 400
    assert bad_role.json()["error"]["param"] == "messages.0.role"

    assert oversized.status_code == 413
    assert "larger than 1,000,000 bytes" in oversized.json()["error"]["message"]
    assert model.requests == []  # nothing reached the model


def test_a_failing_model_is_a_502_or_an_error_event_in_the_stream(tmp_path: Path) -> None:
    turns = [
        Turn.error(500, "This model's server fell over."),
        Turn.text("The answer is").then_stream_error("the model's server fell over mid-reply"),
    ]
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        client = server.openai().with_options(max_retries=0)
        with pytest.raises(openai.InternalServerError) as whole:
            client.chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]
        received: list[str] = []
        chunks = client.chat.completions.create(model="default", messages=QUESTION, stream=True)  # type: ignore[arg-type]
        with pytest.raises(openai.APIError) as streamed:
            received.extend(chunk.choices[0].delta.content or "" for chunk in chunks)

    assert whole.value.status_code == 502
    assert isinstance(whole.value.body, dict)
    assert whole.value.body["code"] == "upstream_error"
    assert "fell over" in whole.value.body["message"]
    assert "The answer is" in "".join(received)  # the failure came after text went out
    assert "the model failed upstream" in streamed.value.message


@pytest.mark.parametrize(
    ("status", "client_error"),
    [
        (400, openai.BadRequestError),
        (401, openai.AuthenticationError),
        (403, openai.PermissionDeniedError),
        (429, openai.RateLimitError),
    ],
)
def test_an_upstream_refusal_is_answered_with_its_own_status(
    tmp_path: Path, status: int, client_error: type[openai.APIStatusError]
) -> None:
    turns = [Turn.error(status, "refused upstream", code="upstream_code", retry_after=7.2)] * 2
    with ScriptedModelServer(turns) as model, serve_in_thread(tmp_path, model) as server:
        client = server.openai().with_options(max_retries=0)
        with pytest.raises(client_error) as whole:
            client.chat.completions.create(model="default", messages=QUESTION)  # type: ignore[arg-type]
        # Streamed, the status line waits for the first event, so the failure still has its status.
        with pytest.raises(client_error) as streamed:
            client.chat.completions.create(model="default", messages=QUESTION, stream=True)  # type: ignore[arg-type]

    for failure in (whole.value, streamed.value):
        assert failure.status_code == status
        assert isinstance(failure.body, dict)
        assert failure.body["code"] == "upstream_code"  # the upstream's own
        assert "refused upstream" in failure.body["message"]
        retry_after = failure.response.headers.get("retry-after")
        assert retry_after == ("8" if status == 429 else None)  # whole seconds, rounded up


def test_an_upstream_server_failure_is_still_a_502(tmp_path: Path) -> None:
    turns = [Turn.error(503, "overloaded")]
    with (
        ScriptedModelServer(turns) as model,
        serve_in_thread(tmp_path, model) as server,
        pytest.raises(openai.APIStatusError) as whole,
    ):
        server.openai().with_options(max_retries=0).chat.completions.create(
            model="default",
            messages=QUESTION,  # type: ignore[arg-type]
        )
    assert whole.value.status_code == 502
