"""`ScriptedModelServer`: the script, its server, the records, and the check that the script was used up.

It needs uvicorn and Starlette (which come with the MCP SDK); the `openai` SDK only for the clients it
makes (`openai_client()`), the `openai` extra."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import anyio

from toolbridge._extras import require
from toolbridge.errors import UsageError
from toolbridge.server._uvicorn import BackgroundServer

from ._app import ScriptedApp
from ._records import RecordedRequest, ReplyRecord, ScriptState
from ._script import Turn

if TYPE_CHECKING:
    import openai

__all__ = ["ScriptedModelServer"]

DEFAULT_WAIT = 5.0


class ScriptedModelServer:
    """A fake model behind the real OpenAI chat-completions protocol on 127.0.0.1.

    Each request takes the next turn of the script. Use it as a context manager (sync or async):
    it starts the server, and on a clean exit stops it and calls `assert_consumed()`.
    """

    def __init__(self, turns: Iterable[Turn] = (), *, model_name: str = "scripted-model") -> None:
        self.model_name = model_name
        self._state = ScriptState(turns)
        self._app = ScriptedApp(self._state, model_name)
        self._server: BackgroundServer | None = None
        self._stopped = False
        self._clients: list[openai.OpenAI] = []
        self._async_clients: list[openai.AsyncOpenAI] = []

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> Self:
        """Start serving; returns once requests are accepted. Idempotent."""
        if self._server is None:
            server = BackgroundServer(self._app.asgi, before_shutdown=self._app.cancel_streaming_replies)
            server.start()
            self._server = server
        return self

    def close(self) -> None:
        """Stop the server, ending any reply still streaming. Idempotent."""
        if self._server is not None and not self._stopped:
            self._stopped = True
            self._server.stop()
        for client in self._clients:
            client.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
        self._finish(exc)

    async def __aenter__(self) -> Self:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # Async clients must be closed on the loop that used them, or their pool breaks a later loop.
        for client in self._async_clients:
            await client.close()
        await anyio.to_thread.run_sync(self.close)
        self._finish(exc)

    def _finish(self, exc: BaseException | None) -> None:
        if exc is None:
            self.assert_consumed()
            return
        # Don't mask the test's own failure, but say if the script went wrong too: it is often why.
        problems = self.script_problems()
        if problems:
            exc.add_note("\n".join(problems))

    # -- where to send requests -----------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """For `openai.OpenAI(base_url=..., api_key="test")`, e.g. `http://127.0.0.1:PORT/v1`."""
        if self._server is None:
            raise UsageError(
                "the scripted model is not started: use `with ScriptedModelServer(...)` or start()"
            )
        return f"http://127.0.0.1:{self._server.port}/v1"

    def openai_client(self, **options: Any) -> openai.OpenAI:
        """A client for this server, closed with it; no retries unless asked for (`max_retries`)."""
        require("openai", "openai", "ScriptedModelServer.openai_client()")
        import openai

        client = openai.OpenAI(**self._client_options(options))
        self._clients.append(client)
        return client

    def async_openai_client(self, **options: Any) -> openai.AsyncOpenAI:
        """An async client, closed when an `async with` of the server ends; otherwise close it yourself."""
        require("openai", "openai", "ScriptedModelServer.async_openai_client()")
        import openai

        client = openai.AsyncOpenAI(**self._client_options(options))
        self._async_clients.append(client)
        return client

    def _client_options(self, options: dict[str, Any]) -> dict[str, Any]:
        return {"base_url": self.base_url, "api_key": "test", "max_retries": 0, **options}

    # -- the script -----------------------------------------------------------------------------

    def add(self, *turns: Turn) -> None:
        """Append turns to the script, e.g. once a test knows what the next reply should be."""
        self._state.add(turns)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every chat-completions request received, in order, with its reply record."""
        return self._state.requests

    @property
    def replies(self) -> list[ReplyRecord]:
        return [request.reply for request in self._state.requests]

    def script_problems(self) -> list[str]:
        """What went wrong with the script so far, one line per problem; empty if nothing did."""
        problems: list[str] = []
        for request in self._state.requests:
            if request.turn_number is None:
                problems.append(
                    f"request {request.number} had no turn left to answer it "
                    f"(last message: {_describe_message(request.last_message)})"
                )
            elif request.expectation_error is not None:
                problems.append(
                    f"request {request.number} failed the expectation of turn {request.turn_number}: "
                    f"{request.expectation_error!r}"
                )
        for number, turn in self._state.unconsumed():
            problems.append(f"turn {number} was never requested: {turn.describe()}")
        return problems

    def assert_consumed(self) -> None:
        """Fail unless every turn answered exactly one request and every expectation held."""
        problems = self.script_problems()
        if not problems:
            return
        requests = len(self._state.requests)
        header = f"scripted model: the script was not followed ({requests} request(s) received):"
        error = AssertionError("\n  ".join([header, *problems]))
        first_failed = next((r.expectation_error for r in self._state.requests if r.expectation_error), None)
        raise error from first_failed

    # -- waiting on the server's state ----------------------------------------------------------

    def wait_until(self, condition: Callable[[], bool], *, timeout: float = DEFAULT_WAIT) -> None:
        """Block until `condition()` holds; it is re-checked on every change the server records."""
        if not self._state.wait_until(condition, timeout):
            raise TimeoutError(f"scripted model: condition not met within {timeout} s")

    def wait_for_reply(self, number: int, *, timeout: float = DEFAULT_WAIT) -> ReplyRecord:
        """Block until the reply to request `number` (1-based) has ended, however it ended."""
        deadline = time.monotonic() + timeout

        def reply_ended() -> bool:
            requests = self._state.requests
            return len(requests) >= number and requests[number - 1].reply.finished

        if not self._state.wait_until(reply_ended, max(0.0, deadline - time.monotonic())):
            requests = self._state.requests
            seen = f"{len(requests)} request(s) received"
            if len(requests) >= number:
                reply = requests[number - 1].reply
                seen += f", reply {number} sent {reply.chunks_sent} of {reply.chunks_total} chunks"
            raise TimeoutError(f"scripted model: reply {number} did not end within {timeout} s ({seen})")
        return self._state.requests[number - 1].reply

    async def wait_for_reply_async(
        self,
        number: int,
        *,
        timeout: float = DEFAULT_WAIT,
    ) -> ReplyRecord:
        """`wait_for_reply` for async tests: waits in a worker thread so the event loop keeps running."""
        return await anyio.to_thread.run_sync(
            lambda: self.wait_for_reply(number, timeout=timeout), abandon_on_cancel=True
        )


def _describe_message(message: dict[str, Any]) -> str:
    if not message:
        return "none"
    content = message.get("content")
    text = content if isinstance(content, str) else repr(content)
    text = text if len(text) <= 60 else text[:59] + "…"
    return f"{message.get('role', '?')} {text!r}"
