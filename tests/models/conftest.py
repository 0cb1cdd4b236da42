"""Fixtures for the model adapters: an isolated tool-mode cache, and a raw SSE endpoint for wire quirks.

`raw_chat_server(chunks)` serves `POST /v1/chat/completions` with exactly the chunks given (as
`data:` lines, then `[DONE]` unless `ending` says the body ends without it or is cut off; a `bytes`
item is sent as it is), for dialects the scripted model does not
speak (a `reasoning` field, ids repeated in every piece, usage inside the choice). It records each
request's headers, body and the client's port (which connection it came on).
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from toolbridge.server._uvicorn import BackgroundServer


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every test gets its own tool-mode memory, and no provider keys from the developer's shell."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TOOLBRIDGE_CACHE_DIR", str(cache))
    for variable in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "DEEPSEEK_API_KEY",
        "DASHSCOPE_API_KEY",
        "MOONSHOT_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OLLAMA_HOST",
        "TOOLBRIDGE_CONFIG",
    ):
        monkeypatch.delenv(variable, raising=False)
    return cache


@dataclass
class RawChatServer:
    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    client_ports: list[int] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    """With `hold_open_after_done`: set to let the body end."""
    body_ended: threading.Event = field(default_factory=threading.Event)


def chunk(
    delta: dict[str, Any] | None = None, finish_reason: str | None = None, **extra: Any
) -> dict[str, Any]:
    """One chat.completion.chunk with a single choice (or none, when `delta` is None)."""
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason, **extra}]
    return {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": choices}


@pytest.fixture
def raw_chat_server() -> Iterator[Callable[..., RawChatServer]]:
    servers: list[BackgroundServer] = []

    def start(
        chunks: list[dict[str, Any] | bytes],
        *,
        status: int = 200,
        error: Any = None,
        hold_open_after_done: bool = False,
        ending: Literal["done", "none", "cut"] = "done",
    ) -> RawChatServer:
        record = RawChatServer(base_url="")

        async def completions(request: Request) -> Response:
            record.requests.append(json.loads(await request.body()))
            record.headers.append(dict(request.headers))
            record.client_ports.append(request.client.port if request.client else 0)
            if status != 200:
                return JSONResponse(error, status_code=status, headers={"x-should-retry": "false"})

            async def body() -> AsyncIterator[bytes]:
                for item in chunks:
                    yield item if isinstance(item, bytes) else f"data: {json.dumps(item)}\n\n".encode()
                if ending == "cut":  # uvicorn drops the connection, the body's last chunk unsent
                    raise ConnectionAbortedError("the scripted server dropped the connection mid-reply")
                if ending == "none":
                    return
                yield b"data: [DONE]\n\n"
                # A server that does not end its body: until released (or 10 s, should nobody release it).
                for _ in range(200 if hold_open_after_done else 0):
                    if record.release.is_set():
                        break
                    await anyio.sleep(0.05)  # a comment line now and then, as a live server sends
                    yield b": still here\n\n"
                record.body_ended.set()

            return StreamingResponse(body(), media_type="text/event-stream")

        server = BackgroundServer(
            Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
        )
        server.start()
        servers.append(server)
        record.base_url = f"http://127.0.0.1:{server.port}/v1"
        return record

    yield start
    for server in servers:
        server.stop()
