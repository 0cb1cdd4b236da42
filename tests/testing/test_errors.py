"""Error turns reach the client as the `openai` exception a real provider's error would raise."""

import openai
import pytest
from openai.types.chat import ChatCompletionMessageParam

from toolbridge.testing import ScriptedModelServer, Turn

USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


def test_a_400_error_turn_raises_bad_request_with_status_message_and_body() -> None:
    script = [Turn.error(400, "tools are not supported by this model", code="tools_unsupported")]
    with ScriptedModelServer(script) as model, pytest.raises(openai.BadRequestError) as raised:
        model.openai_client().chat.completions.create(
            model="m", messages=USER, stream=True, tools=[{"type": "function", "function": {"name": "f"}}]
        )
    assert raised.value.status_code == 400
    assert "tools are not supported by this model" in raised.value.message
    assert raised.value.code == "tools_unsupported"
    assert raised.value.type == "invalid_request_error"
    assert model.requests[0].reply.status == 400


@pytest.mark.anyio
async def test_a_500_error_turn_raises_internal_server_error_in_the_async_client() -> None:
    async with ScriptedModelServer([Turn.error(500, "the GPU caught fire")]) as model:
        with pytest.raises(openai.InternalServerError, match="the GPU caught fire") as raised:
            await model.async_openai_client().chat.completions.create(model="m", messages=USER)
    assert raised.value.status_code == 500


def test_a_client_that_retries_a_429_takes_the_next_turn_for_the_retry() -> None:
    script = [Turn.error(429, "rate limited", retry_after=0.001), Turn.text("ok")]
    with ScriptedModelServer(script) as model:
        reply = model.openai_client(max_retries=1).chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "ok"
    assert [r.reply.status for r in model.requests] == [429, 200]
    assert [r.turn_number for r in model.requests] == [1, 2]


def test_a_429_without_retries_raises_rate_limit_error() -> None:
    with (
        ScriptedModelServer([Turn.error(429, "slow down")]) as model,
        pytest.raises(openai.RateLimitError, match="slow down"),
    ):
        model.openai_client().chat.completions.create(model="m", messages=USER, stream=True)
