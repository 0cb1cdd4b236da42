"""The scripted model records what it was sent and fails the test when the script is not followed."""

import openai
import pytest
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam

from toolbridge.errors import UsageError
from toolbridge.testing import RecordedRequest, ScriptedModelServer, Turn

USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "What is 15 + 27?"}]
CALCULATE: ChatCompletionFunctionToolParam = {
    "type": "function",
    "function": {"name": "calculate", "parameters": {"type": "object", "properties": {}}},
}


def test_every_request_is_recorded_with_its_body_and_receive_time() -> None:
    with ScriptedModelServer([Turn.text("a"), Turn.text("b")]) as model:
        client = model.openai_client()
        list(
            client.chat.completions.create(
                model="m1", messages=USER, tools=[CALCULATE], tool_choice="auto", stream=True, temperature=0.5
            )
        )
        client.chat.completions.create(model="m2", messages=[*USER, {"role": "assistant", "content": "a"}])

    first, second = model.requests
    assert (first.number, first.turn_number, second.number, second.turn_number) == (1, 1, 2, 2)
    assert first.model == "m1"
    assert first.stream
    assert first.body["temperature"] == 0.5
    assert first.messages == USER
    assert first.tool_names == ["calculate"]
    assert first.tool_choice == "auto"
    assert second.model == "m2"
    assert not second.stream
    assert second.tools == []
    assert second.last_message == {"role": "assistant", "content": "a"}
    assert first.received_at <= second.received_at  # the order they arrived in


def test_an_expectation_that_holds_lets_the_reply_through() -> None:
    def asks_a_question(request: RecordedRequest) -> None:
        assert request.last_message["role"] == "user"

    with ScriptedModelServer([Turn.text("42", expect=asks_a_question)]) as model:
        reply = model.openai_client().chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "42"


def test_a_failed_expectation_fails_the_request_without_retries_and_fails_the_script() -> None:
    def last_message_is_a_tool_result(request: RecordedRequest) -> None:
        assert request.last_message["role"] == "tool", "expected a tool result"

    model = ScriptedModelServer([Turn.text("42").expecting(last_message_is_a_tool_result)])
    # The script's failure is raised when the block ends, so the block holds the whole test.
    with pytest.raises(AssertionError, match="the script was not followed") as failed, model:  # noqa: PT012
        client = model.openai_client(max_retries=2)
        with pytest.raises(openai.InternalServerError, match="failed the expectation of turn 1") as refused:
            client.chat.completions.create(model="m", messages=USER)
        assert "expected a tool result" in refused.value.message

    assert len(model.requests) == 1  # the client was told not to retry
    assert "request 1 failed the expectation of turn 1" in str(failed.value)
    assert isinstance(failed.value.__cause__, AssertionError)


def test_an_expectation_can_be_a_lambda_that_returns_false() -> None:
    model = ScriptedModelServer([Turn.text("x", expect=lambda request: request.stream)])
    with (
        pytest.raises(AssertionError, match="returned False"),  # raised when the model's block ends
        model,
        pytest.raises(openai.InternalServerError),
    ):
        model.openai_client().chat.completions.create(model="m", messages=USER)


def test_an_unconsumed_script_fails_at_exit_listing_the_turns_left() -> None:
    script = [Turn.text("Hello"), Turn.text("Bye"), Turn.error(500, "boom")]
    with pytest.raises(AssertionError) as failed, ScriptedModelServer(script) as model:
        model.openai_client().chat.completions.create(model="m", messages=USER)
    message = str(failed.value)
    assert "1 request(s) received" in message
    assert "turn 2 was never requested: content 'Bye'" in message
    assert "turn 3 was never requested: error 500 'boom'" in message


@pytest.mark.anyio
async def test_an_extra_request_gets_a_500_and_fails_the_script_at_exit() -> None:
    model = ScriptedModelServer([Turn.text("only one")])
    with pytest.raises(AssertionError) as failed:  # noqa: PT012 - the failure comes at exit
        async with model:
            client = model.async_openai_client(max_retries=2)
            await client.chat.completions.create(model="m", messages=USER)
            with pytest.raises(
                openai.InternalServerError, match="scripted model: no turn left for request 2"
            ):
                await client.chat.completions.create(model="m", messages=USER)
    assert len(model.requests) == 2  # not retried
    assert "request 2 had no turn left to answer it (last message: user 'What is 15 + 27?')" in str(
        failed.value
    )


def test_a_failing_test_keeps_its_own_error_with_the_script_problems_as_a_note() -> None:
    with pytest.raises(KeyError) as raised, ScriptedModelServer([Turn.text("never sent")]):
        raise KeyError("the test's own failure")
    assert raised.value.__notes__ == ["turn 1 was never requested: content 'never sent'"]


def test_turns_added_after_start_are_part_of_the_script() -> None:
    with ScriptedModelServer() as model:
        model.add(Turn.text("late"))
        reply = model.openai_client().chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "late"
    model.assert_consumed()


def test_base_url_needs_a_started_model() -> None:
    with pytest.raises(UsageError, match="not started"):
        _ = ScriptedModelServer().base_url
