"""What toolbridge offers servers as their client reaches each session, told which server asks; what
it does not offer is refused by the SDK as unsupported."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as mcp
import pytest

from toolbridge.config.model import ServerConfig
from toolbridge.mcp import ServerConnection
from toolbridge.mcp.client_features import ClientFeatures

pytestmark = pytest.mark.anyio


async def call(config: ServerConfig, features: ClientFeatures, tool: str, arguments: dict[str, Any]) -> str:
    async with ServerConnection(config, features=features) as server:
        result = await server.call_tool(tool, arguments, call_id="call_1")
    return result.text


@pytest.mark.slow
async def test_sampling_elicitation_and_roots_are_answered_by_the_features(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    asked: list[tuple[str, str]] = []

    async def sample(server: str, params: mcp.CreateMessageRequestParams) -> mcp.CreateMessageResult:
        message = params.messages[0].content
        assert isinstance(message, mcp.TextContent)
        asked.append((server, f"{params.system_prompt} {message.text} {params.max_tokens}"))
        return mcp.CreateMessageResult(
            role="assistant", content=mcp.TextContent(type="text", text="short."), model="scripted"
        )

    async def elicit(server: str, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
        asked.append((server, params.message))
        return mcp.ElicitResult(action="accept", content={"name": "Ada", "age": 36})

    def roots(server: str) -> list[mcp.Root]:
        return [mcp.Root(uri=f"file:///work/{server}", name="work")]

    features = ClientFeatures(sampling=sample, elicitation=elicit, roots=roots)
    config = stdio_server("asks_client", name="asker")

    assert await call(config, features, "summarize", {"text": "a long text"}) == "short."
    assert await call(config, features, "ask_contact", {}) == "accepted Ada (36)"
    assert await call(config, features, "show_roots", {}) == "file:///work/asker"
    assert asked == [("asker", "Summarize in one line. a long text 64"), ("asker", "Who should we contact?")]


async def test_log_messages_reach_the_log_handler_with_the_servers_name(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    logged: list[tuple[str, str, Any]] = []
    arrived = anyio.Event()

    async def on_log(server: str, params: mcp.LoggingMessageNotificationParams) -> None:
        logged.append((server, params.level, params.data))
        arrived.set()

    features = ClientFeatures(on_log=on_log)
    async with ServerConnection(stdio_server("asks_client", name="loud"), features=features) as server:
        result = await server.call_tool("shout", {"text": "hey"}, call_id="call_1")
        # Notifications are delivered in a task of their own: the result may come first.
        with anyio.fail_after(10):
            await arrived.wait()

    assert result.text == "hey"
    assert logged == [("loud", "warning", "hey")]


async def test_a_feature_not_offered_is_refused_as_unsupported(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    result_text = await call(stdio_server("asks_client"), ClientFeatures(), "summarize", {"text": "x"})
    assert "Sampling not supported" in result_text
