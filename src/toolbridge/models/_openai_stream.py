"""The chunks of a streamed chat completion, read off the SDK's HTTP response with our own SSE decoder.

The request, its retries and its status errors stay the `openai` SDK's; only reading the reply is
ours: the SDK's decoder (str lines, one `ServerSentEvent` per event) cost more CPU than everything
else the pass-through endpoint does per chunk. Chunks come out as parsed JSON; an error the server
sends inside the stream or a timeout raise the SDK's own exceptions, as its stream would. A body cut
off (the connection lost before its end) raises `ReplyCutOff`: the server was reached and had begun to
answer, so it is not the SDK's "connection error". `ChunkStream.done` says whether `[DONE]` came.

This is the one module that reaches into the `openai` SDK beyond its documented API: `ChunkStream`
subclasses `openai.AsyncStream`, overrides its `__stream__` (which the SDK's `__init__` calls once, keeping
the generator as `_iterator`) and hands out `_iterator` itself from `__aiter__`, sparing an async
generator around every chunk. `openai` is bounded below its next major version in pyproject.toml, and
tests/test_dependency_contracts.py checks this against the installed SDK.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import anyio
import httpx2
import openai

from toolbridge.models._sse import SseDecoder

__all__ = ["ChunkStream", "ReplyCutOff"]

_DRAIN_SECONDS = 0.1
"""How long the rest of the body after `[DONE]` is read (as the SDK does), so the connection can be
reused; a server that keeps the stream open past it loses the connection instead of holding us up."""


class ReplyCutOff(openai.APIError):
    """The reply's body ended before the reply did: the connection was lost, or the body ended without
    `[DONE]` and without a finish reason (the adapter, which reads the chunks, decides the latter)."""


class ChunkStream(openai.AsyncStream[object]):
    """`stream_cls` for the SDK's `post(..., stream=True)`: each chunk as the JSON it came as."""

    done = False
    """Whether the stream ended with `data: [DONE]`."""

    def __aiter__(self) -> AsyncIterator[object]:
        return self._iterator  # the chunks themselves, not the SDK's generator around them

    async def __stream__(self) -> AsyncIterator[object]:
        response = self.response
        decoder = SseDecoder()
        try:
            async with aclosing(response.aiter_bytes()) as received:
                async for part in received:
                    for data in decoder.feed(part):
                        if data.startswith(b"[DONE]"):
                            self.done = True
                            await _drain(received)
                            return
                        yield _chunk(data, response)
        except httpx2.TimeoutException as error:
            raise openai.APITimeoutError(request=response.request) from error
        except httpx2.RequestError as error:
            raise ReplyCutOff(
                f"the connection was lost before the reply ended ({error or type(error).__name__})",
                request=response.request,
                body=None,
            ) from error
        finally:
            await response.aclose()


async def _drain(rest: AsyncIterator[bytes]) -> None:
    with anyio.move_on_after(_DRAIN_SECONDS):
        try:
            async for _ in rest:
                pass
        except httpx2.RequestError:
            pass  # the reply is complete: a connection lost now costs only the connection


def _chunk(data: bytes, response: httpx2.Response) -> Any:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise openai.APIError(
            f"the stream sent an event that is not JSON: {data[:200]!r}", request=response.request, body=None
        ) from None
    if isinstance(chunk, dict) and (error := chunk.get("error")):
        message = error.get("message") if isinstance(error, dict) else None
        if not message or not isinstance(message, str):
            message = "An error occurred during streaming"
        raise openai.APIError(message, request=response.request, body=error)
    return chunk
