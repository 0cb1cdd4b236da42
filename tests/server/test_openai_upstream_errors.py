"""Upstream failures keep their meaning on `/v1/chat/completions`: the `openai` SDK, as the client, sees the
status, the OpenAI error code and the Retry-After a direct call to the upstream would have given it,
whether `model` names an agent (which runs its loop) or the model itself (pass-through, client tools).

The upstreams are scripted models over the real OpenAI and Anthropic wires, answering with each
provider's own error bodies (their real wording), a port nobody listens on, and one that never answers.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
import pytest
from server_helpers import RunningServer, free_port, serve_in_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from toolbridge.server._uvicorn import BackgroundServer
from toolbridge.testing import ScriptedAnthropicServer, ScriptedModelServer, Turn

QUESTION: Any = [{"role": "user", "content": "What is 15 + 27?"}]
WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
ROUTES: dict[str, dict[str, Any]] = {
    "agent": {"model": "default"},  # the agent whose model is `upstream`
    "passthrough": {"model": "upstream", "tools": [WEATHER]},
}


@pytest.fixture(params=sorted(ROUTES))
def route(request: pytest.FixtureRequest) -> dict[str, Any]:
    """How the request reaches the upstream: through an agent, or passed through with client tools."""
    return ROUTES[request.param]


def openai_model(model: ScriptedModelServer, **settings: Any) -> dict[str, Any]:
    return {
        "provider": "openai",
        "model": model.model_name,
        "base_url": model.base_url,
        "api_key": "test",
        "max_retries": 0,
        "tool_mode": "native",
        **settings,
    }


def anthropic_model(model: ScriptedAnthropicServer) -> dict[str, Any]:
    return {
        "provider": "anthropic",
        "model": "claude-scripted",
        "base_url": model.base_url,
        "api_key": "test",
        "max_retries": 0,
    }


@contextmanager
def upstream(wire: str, turns: list[Turn]) -> Iterator[tuple[ScriptedModelServer, dict[str, Any]]]:
    """A scripted upstream on `wire` ("openai" or "anthropic") and the `models` entry pointing at it."""
    if wire == "anthropic":
        with ScriptedAnthropicServer(turns) as claude:
            yield claude, anthropic_model(claude)
    else:
        with ScriptedModelServer(turns) as model:
            yield model, openai_model(model)


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event.get('type', 'chunk')}\ndata: {json.dumps(event)}\n\n".encode()


_OPENAI_START = [
    {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "The answer is"}}],
    }
]
_ANTHROPIC_START = [
    {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 1},
        },
    },
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "The answer is"}},
]


@contextmanager
def ending_early(wire: str, ending: str) -> Iterator[dict[str, Any]]:
    """An upstream on `wire` whose streamed reply begins, then ends early: with no finish_reason and no
    [DONE] (Anthropic: no stop_reason, no message_stop) ("unfinished"), or with the connection lost
    mid-body ("dropped"); and its `models` entry."""

    async def reply(_: Request) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            for event in _ANTHROPIC_START if wire == "anthropic" else _OPENAI_START:
                yield _sse(event)
            if ending == "dropped":  # uvicorn drops the connection, the body's last chunk unsent
                raise ConnectionAbortedError("the scripted upstream dropped the connection mid-reply")

        return StreamingResponse(body(), media_type="text/event-stream")

    path = "/v1/messages" if wire == "anthropic" else "/v1/chat/completions"
    server = BackgroundServer(Starlette(routes=[Route(path, reply, methods=["POST"])]))
    server.start()
    address = f"http://127.0.0.1:{server.port}"
    try:
        yield {
            "provider": wire,
            "model": "m",
            "base_url": address if wire == "anthropic" else f"{address}/v1",
            "api_key": "test",
            "max_retries": 0,
            **({} if wire == "anthropic" else {"tool_mode": "native"}),
        }
    finally:
        server.stop()


@contextmanager
def serving(tmp_path: Path, entry: dict[str, Any]) -> Iterator[RunningServer]:
    """`toolbridge serve` whose `upstream` model is `entry`, and whose `default` agent uses it."""
    agents = {"default": {"model": "upstream"}}
    with serve_in_thread(tmp_path, None, models={"upstream": entry}, agents=agents) as server:
        yield server


def ask(server: RunningServer, route: dict[str, Any], *, stream: bool) -> None:
    """One request through the SDK; a streamed one is read to its end."""
    client = server.openai()
    if stream:
        for _ in client.chat.completions.create(messages=QUESTION, stream=True, **route):
            pass
    else:
        client.chat.completions.create(messages=QUESTION, **route)


def error_of(failure: openai.APIError) -> dict[str, Any]:
    assert isinstance(failure.body, dict), failure.body
    return failure.body


# -- each provider's own words -------------------------------------------------------------------------

OPENAI_KEY_REJECTED = {
    "error": {
        "message": "Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}
ANTHROPIC_KEY_REJECTED = {
    "type": "error",
    "error": {"type": "authentication_error", "message": "invalid x-api-key"},
}

CONTEXT_TOO_LONG: dict[str, tuple[str, int, dict[str, Any]]] = {
    "openai": (
        "openai",
        400,
        {
            "error": {
                "message": "This model's maximum context length is 128000 tokens. However, your messages "
                "resulted in 130211 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
    # Newer OpenAI models word it differently; the code is what is read (the text matches too).
    "openai-context-window": (
        "openai",
        400,
        {
            "error": {
                "message": "Your input exceeds the context window of this model. Please adjust your input "
                "and try again.",
                "type": "invalid_request_error",
                "param": "input",
                "code": None,
            }
        },
    ),
    "vllm": (
        "openai",
        400,
        {
            "error": {
                "message": "This model's maximum context length is 32768 tokens. However, your request has "
                "40000 input tokens. Please reduce the length of the input messages.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        },
    ),
    # vLLM's input processor, in its older top-level error shape.
    "vllm-decoder-prompt": (
        "openai",
        400,
        {
            "object": "error",
            "message": "The decoder prompt (length 9254) is longer than the maximum model length of 4096. "
            "Make sure that `max_model_len` is no smaller than the number of text tokens.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    ),
    "llama.cpp": (
        "openai",
        400,
        {
            "error": {
                "code": 400,
                "message": "request (4476 tokens) exceeds the available context size (4096 tokens), try "
                "increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 4476,
                "n_ctx": 4096,
            }
        },
    ),
    # Some llama.cpp and Ollama versions report it as an internal error.
    "ollama": (
        "openai",
        500,
        {
            "error": {
                "message": "the input length exceeds the context length",
                "type": "api_error",
                "param": None,
                "code": None,
            }
        },
    ),
    "anthropic": (
        "anthropic",
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 208656 tokens > 200000 maximum",
            },
        },
    ),
    "anthropic-with-max-tokens": (
        "anthropic",
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, "
                "decrease input length or `max_tokens` and try again",
            },
        },
    ),
}


# -- the tests -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("provider", sorted(CONTEXT_TOO_LONG))
def test_a_context_length_error_is_a_400_context_length_exceeded(
    tmp_path: Path, route: dict[str, Any], provider: str, stream: bool
) -> None:
    wire, status, body = CONTEXT_TOO_LONG[provider]
    with (
        upstream(wire, [Turn.error(status, "", body=body)]) as (_, entry),
        serving(tmp_path, entry) as server,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        ask(server, route, stream=stream)

    assert refused.value.status_code == 400
    assert refused.value.code == "context_length_exceeded"
    error = error_of(refused.value)
    assert error["type"] == "invalid_request_error"
    assert error["param"] == "messages"
    assert "too long for model" in error["message"]
    assert "Shorten the conversation" in error["message"]


def test_a_plain_bad_request_is_not_taken_for_a_context_length_error(
    tmp_path: Path, route: dict[str, Any]
) -> None:
    turns = [Turn.error(400, "temperature must be at most 2", code="invalid_value")]
    with (
        ScriptedModelServer(turns) as model,
        serving(tmp_path, openai_model(model)) as server,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        ask(server, route, stream=False)
    assert refused.value.code == "invalid_value"  # the upstream's own code, passed on
    assert "temperature must be at most 2" in error_of(refused.value)["message"]


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize(
    ("wire", "body", "said"),
    [
        ("openai", OPENAI_KEY_REJECTED, "Incorrect API key provided"),
        ("anthropic", ANTHROPIC_KEY_REJECTED, "invalid x-api-key"),
    ],
)
def test_a_rejected_upstream_key_is_a_401_with_the_upstreams_message(
    tmp_path: Path, route: dict[str, Any], wire: str, body: dict[str, Any], said: str, stream: bool
) -> None:
    with (
        upstream(wire, [Turn.error(401, "", body=body)]) as (model, entry),
        serving(tmp_path, entry) as server,
        pytest.raises(openai.AuthenticationError) as refused,
    ):
        ask(server, route, stream=stream)

    assert refused.value.status_code == 401
    assert refused.value.code == "invalid_api_key"
    message = error_of(refused.value)["message"]
    assert said in message
    assert model.base_url.rstrip("/") in message  # which upstream refused it
    assert "models.upstream.api_key" in message  # and which key to check


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_rate_limit_is_a_429_with_the_upstreams_retry_after(
    tmp_path: Path, route: dict[str, Any], wire: str, stream: bool
) -> None:
    limited = Turn.error(429, "Rate limit reached for requests", headers={"retry-after": "30"})
    with (
        upstream(wire, [limited]) as (_, entry),
        serving(tmp_path, entry) as server,
        pytest.raises(openai.RateLimitError) as refused,
    ):
        ask(server, route, stream=stream)

    assert refused.value.status_code == 429
    assert refused.value.code == "rate_limit_exceeded"
    assert refused.value.response.headers["retry-after"] == "30"
    assert refused.value.response.headers["retry-after-ms"] == "30000"
    assert "Rate limit reached for requests" in error_of(refused.value)["message"]
    assert "Wait 30 s, as it asks," in error_of(refused.value)["message"]


def test_a_quota_code_is_passed_on_so_clients_do_not_retry_it(tmp_path: Path, route: dict[str, Any]) -> None:
    turns = [Turn.error(429, "You exceeded your current quota.", code="insufficient_quota")]
    with (
        ScriptedModelServer(turns) as model,
        serving(tmp_path, openai_model(model)) as server,
        pytest.raises(openai.RateLimitError) as refused,
    ):
        ask(server, route, stream=False)
    assert refused.value.code == "insufficient_quota"
    assert "retry-after" not in refused.value.response.headers


def test_the_models_own_retries_pass_on_the_last_retry_after(tmp_path: Path, route: dict[str, Any]) -> None:
    # The SDK behind the model retries a 429 (here once, after the 10 ms asked for); the client is
    # told the wait the upstream asked for last, not the first one nor none.
    turns = [
        Turn.error(429, "slow down", retry_after=0.01),
        Turn.error(429, "slow down more", retry_after=3.5),
    ]
    with (
        ScriptedModelServer(turns) as model,
        serving(tmp_path, openai_model(model, max_retries=1)) as server,
        pytest.raises(openai.RateLimitError) as refused,
    ):
        ask(server, route, stream=False)
    assert len(model.requests) == 2
    assert refused.value.response.headers["retry-after"] == "4"  # whole seconds, rounded up
    assert refused.value.response.headers["retry-after-ms"] == "3500"
    assert "slow down more" in error_of(refused.value)["message"]


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_wait_longer_than_the_retry_budget_is_passed_on_at_once(
    tmp_path: Path, route: dict[str, Any], wire: str
) -> None:
    # The model may retry twice, but not after waiting 30 s: the client decides whether to wait.
    limited = Turn.error(429, "Rate limit reached", headers={"retry-after": "30"})
    with (
        upstream(wire, [limited]) as (model, entry),
        serving(tmp_path, {**entry, "max_retries": 2}) as server,
        pytest.raises(openai.RateLimitError) as refused,
    ):
        ask(server, route, stream=False)
    assert len(model.requests) == 1
    assert refused.value.response.headers["retry-after"] == "30"


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_upstream_server_error_is_a_502_naming_the_upstream(
    tmp_path: Path, route: dict[str, Any], wire: str, stream: bool
) -> None:
    with (
        upstream(wire, [Turn.error(500, "CUDA out of memory")]) as (model, entry),
        serving(tmp_path, entry) as server,
        pytest.raises(openai.InternalServerError) as failed,
    ):
        ask(server, route, stream=stream)

    assert failed.value.status_code == 502
    assert failed.value.code == "upstream_error"
    message = error_of(failed.value)["message"]
    assert "CUDA out of memory" in message
    assert model.base_url.rstrip("/") in message
    # The route taken: only a pass-through request carries the client's tool upstream.
    [request] = model.requests
    assert ("get_weather" in json.dumps(request.body)) == ("tools" in route)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_an_upstream_nobody_listens_on_is_a_502_naming_the_endpoint(
    tmp_path: Path, route: dict[str, Any], stream: bool
) -> None:
    address = f"http://127.0.0.1:{free_port()}/v1"
    entry = {"provider": "openai", "model": "gone", "base_url": address, "api_key": "test", "max_retries": 0}
    with (
        serving(tmp_path, entry) as server,
        pytest.raises(openai.InternalServerError) as failed,
    ):
        ask(server, route, stream=stream)

    assert failed.value.status_code == 502
    assert failed.value.code == "upstream_unreachable"
    assert f"cannot connect to {address}" in error_of(failed.value)["message"]


def test_an_upstream_that_never_answers_is_a_504_naming_the_endpoint(
    tmp_path: Path, route: dict[str, Any]
) -> None:
    # A socket that listens but never accepts: the connection is made, the request sent, no answer comes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        address = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        entry = {
            "provider": "openai",
            "model": "silent",
            "base_url": address,
            "api_key": "test",
            "max_retries": 0,
            "timeout": 0.5,
        }
        with (
            serving(tmp_path, entry) as server,
            pytest.raises(openai.APIStatusError) as failed,
        ):
            ask(server, route, stream=False)

    assert failed.value.status_code == 504
    assert failed.value.code == "upstream_timeout"
    assert f"{address} did not answer in time" in error_of(failed.value)["message"]


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_failure_after_the_first_chunk_is_an_error_chunk_that_ends_the_stream(
    tmp_path: Path, route: dict[str, Any], wire: str
) -> None:
    turns = [Turn.text("The answer is").then_stream_error("the server fell over mid-reply")]
    received: list[str] = []
    with (
        upstream(wire, turns) as (_, entry),
        serving(tmp_path, entry) as server,
    ):
        chunks = server.openai().chat.completions.create(messages=QUESTION, stream=True, **route)
        with pytest.raises(openai.APIError) as broken:
            received.extend(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)

    assert "".join(received) == "The answer is"  # the status line (200) had gone out with these
    assert not isinstance(broken.value, openai.APIStatusError)
    assert broken.value.code == "upstream_error"
    assert "the server fell over mid-reply" in broken.value.message


@pytest.mark.parametrize("ending", ["unfinished", "dropped"])
@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_reply_that_ends_early_is_a_502_or_an_error_event_saying_it_was_cut_off(
    tmp_path: Path, route: dict[str, Any], wire: str, ending: str
) -> None:
    """Not a 200 `stop` for a reply with neither a finish_reason nor [DONE], nor "cannot connect" for one
    whose connection was lost mid-body."""
    received: list[str] = []
    with ending_early(wire, ending) as entry, serving(tmp_path, entry) as server:
        with pytest.raises(openai.APIStatusError) as whole:
            ask(server, route, stream=False)
        chunks = server.openai().chat.completions.create(messages=QUESTION, stream=True, **route)
        with pytest.raises(openai.APIError) as streamed:
            received.extend(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)

    assert whole.value.status_code == 502
    assert whole.value.code == "upstream_error"
    assert f"the reply from {entry['base_url']} was cut off" in error_of(whole.value)["message"]
    assert "cannot connect" not in error_of(whole.value)["message"]
    assert "The answer is" in "".join(received)
    assert not isinstance(streamed.value, openai.APIStatusError)
    assert streamed.value.code == "upstream_error"
    assert "was cut off" in streamed.value.message
