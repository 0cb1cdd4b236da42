"""The server sees a client hang up mid-stream and stops, and records how far it got.

Tests wait on the server's recorded state (`wait_for_reply`), never on sleeps.
"""

import pytest
from openai.types.chat import ChatCompletionMessageParam

from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn

USER: list[ChatCompletionMessageParam] = [{"role": "user", "content": "What time is it?"}]
CALL = ToolCallSpec("get_current_time", {"timezone": "UTC"})


def call_then_filler() -> Turn:
    # A complete call, then 2,000 tokens at 100 tokens/s the client should never wait for.
    return Turn.calls_in_text(CALL).then_tokens(2000, token=" (waiting for the tool result...)", delay=0.01)


def test_a_client_that_closes_the_stream_after_the_call_is_seen_hanging_up() -> None:
    with ScriptedModelServer([call_then_filler()]) as model:
        stream = model.openai_client().chat.completions.create(model="m", messages=USER, stream=True)
        text = ""
        for chunk in stream:
            text += chunk.choices[0].delta.content or ""
            if text.endswith("</tool_call>"):
                break
        stream.close()
        reply = model.wait_for_reply(1)

    assert text == CALL.as_markup()
    assert reply.client_disconnected
    assert not reply.completed
    assert reply.chunks_sent < reply.chunks_total
    call_sent_at, filler_sent_at = reply.segment_ended_at
    assert call_sent_at is not None
    assert call_sent_at <= (reply.ended_at or 0)
    assert filler_sent_at is None  # the filler's last token was never sent


@pytest.mark.anyio
async def test_an_async_client_that_closes_the_stream_early_is_seen_hanging_up() -> None:
    async with ScriptedModelServer([call_then_filler()]) as model:
        client = model.async_openai_client()
        stream = await client.chat.completions.create(model="m", messages=USER, stream=True)
        text = ""
        async for chunk in stream:
            text += chunk.choices[0].delta.content or ""
            if text.endswith("</tool_call>"):
                break
        await stream.close()
        reply = await model.wait_for_reply_async(1)

    assert reply.client_disconnected
    assert reply.chunks_sent < reply.chunks_total
    assert reply.segment_ended_at[1] is None


def test_a_stream_read_to_the_end_is_complete_and_not_a_hang_up() -> None:
    with ScriptedModelServer([Turn.text("Hello", chunk_size=1)]) as model:
        list(model.openai_client().chat.completions.create(model="m", messages=USER, stream=True))
        reply = model.wait_for_reply(1)

    assert reply.completed
    assert not reply.client_disconnected
    assert reply.chunks_sent == reply.chunks_total == 8  # role, 5 pieces, finish, [DONE]
    assert reply.started_at is not None
    assert reply.ended_at is not None
    assert reply.chunk_sent_at == sorted(reply.chunk_sent_at)


def test_a_per_chunk_delay_paces_the_stream() -> None:
    with ScriptedModelServer([Turn.text("abcde", chunk_size=1, delay=0.02)]) as model:
        list(model.openai_client().chat.completions.create(model="m", messages=USER, stream=True))
        reply = model.wait_for_reply(1)

    pieces_sent_at = reply.chunk_sent_at[1:6]
    assert pieces_sent_at[-1] - pieces_sent_at[0] >= 4 * 0.02 * 0.9  # allow the clock's resolution


def test_closing_the_model_ends_a_reply_still_streaming_to_a_client_that_stopped_reading() -> None:
    model = ScriptedModelServer([Turn.text("start").then_tokens(1000, delay=0.05)])
    with model:
        stream = model.openai_client().chat.completions.create(model="m", messages=USER, stream=True)
        next(iter(stream))
        model.wait_until(lambda: model.replies[0].chunks_sent >= 1)
    stream.close()

    reply = model.replies[0]
    assert reply.finished
    assert not reply.completed
    assert not reply.client_disconnected


def test_waiting_for_a_reply_that_never_comes_times_out_with_what_was_seen() -> None:
    with (
        ScriptedModelServer() as model,
        pytest.raises(TimeoutError, match=r"reply 1 did not end .*0 request\(s\)"),
    ):
        model.wait_for_reply(1, timeout=0.01)
