"""A server's sampling request with an image and an audio clip (tests/servers/asks_client.py, over real
stdio) reaches a scripted model over the real OpenAI and Anthropic wires: the image as an image part in
the provider's own format where the model takes images, described in words where it does not; tools in
the request (and a required tool choice) reach the model too."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from toolbridge.agent import Agent
from toolbridge.config import Config
from toolbridge.config.asks import SamplingConfig
from toolbridge.config.model import ServerConfig
from toolbridge.models import AnthropicModel, Model, OpenAIChatModel
from toolbridge.testing import ScriptedAnthropicServer, ScriptedModelServer, ToolCallSpec, Turn
from toolbridge.tools import ToolPipeline
from toolbridge.types import ToolCall, ToolResult

pytestmark = pytest.mark.anyio


async def run_call(agent: Agent, call: ToolCall) -> ToolResult:
    """`call` through the pipeline over the agent's tools, as a library program calls."""
    return (await ToolPipeline(agent.registry).call(call)).result


DOT_PNG_START = "iVBORw0KGgo"


@pytest.fixture
def trusted_asker(stdio_server: Callable[..., ServerConfig]) -> Config:
    server = stdio_server("asks_client", name="asker").model_copy(
        update={"sampling": SamplingConfig(approval="never")}
    )
    return Config(servers={"asker": server})


async def describe_media(config: Config, model: Model, *, offer_lookup: bool = False) -> dict[str, Any]:
    async with Agent.from_config(config, model=model) as agent:
        result = await run_call(
            agent, ToolCall(name="describe_media", arguments={"offer_lookup": offer_lookup})
        )
    await model.aclose()
    assert not result.is_error, result.text
    answer: dict[str, Any] = json.loads(result.text)
    return answer


async def test_an_image_reaches_an_openai_model_as_an_image_url_part_and_tools_come_along(
    trusted_asker: Config,
) -> None:
    async with ScriptedModelServer([Turn.tool_calls(ToolCallSpec("lookup", {"q": "dot"}))]) as scripted:
        model = OpenAIChatModel("gpt-test", provider="openai", base_url=scripted.base_url, api_key="k")
        answer = await describe_media(trusted_asker, model, offer_lookup=True)
        [request] = scripted.requests

    content: list[dict[str, Any]] = request.last_message["content"]
    assert content[0] == {"type": "text", "text": "What do these show?"}
    assert content[1]["type"] == "image_url"
    assert content[1]["image_url"]["url"].startswith(f"data:image/png;base64,{DOT_PNG_START}")
    assert content[2]["text"].startswith("Attached an audio clip (audio/wav, ")
    assert content[2]["text"].endswith("not shown: this model does not take audio).")
    assert [tool["function"]["name"] for tool in request.tools] == ["lookup"]
    assert request.tool_choice == "required"  # the request's toolChoice
    assert answer["stopReason"] == "toolUse"
    assert answer["content"][-1]["name"] == "lookup"
    assert answer["content"][-1]["input"] == {"q": "dot"}


async def test_an_image_reaches_claude_as_an_image_block(trusted_asker: Config) -> None:
    async with ScriptedAnthropicServer([Turn.text("A dot.")]) as scripted:
        model = AnthropicModel("claude-test", base_url=scripted.base_url, api_key="sk-ant-test")
        answer = await describe_media(trusted_asker, model)
        sent = scripted.requests[0].body["messages"][-1]

    assert sent["role"] == "user"
    assert sent["content"][0] == {"type": "text", "text": "What do these show?"}
    image = sent["content"][1]
    assert image["type"] == "image"
    assert image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png"
    assert image["source"]["data"].startswith(DOT_PNG_START)
    assert answer["content"] == {"type": "text", "text": "A dot."}


async def test_tools_and_a_required_tool_choice_reach_claude(trusted_asker: Config) -> None:
    async with ScriptedAnthropicServer([Turn.tool_calls(ToolCallSpec("lookup", {"q": "dot"}))]) as scripted:
        model = AnthropicModel("claude-test", base_url=scripted.base_url, api_key="sk-ant-test")
        answer = await describe_media(trusted_asker, model, offer_lookup=True)
        body = scripted.requests[0].body

    assert [tool["name"] for tool in body["tools"]] == ["lookup"]
    assert body["tool_choice"] == {"type": "any"}
    assert answer["stopReason"] == "toolUse"
    assert answer["content"][-1]["input"] == {"q": "dot"}


async def test_a_text_only_model_gets_the_image_described_and_says_why(trusted_asker: Config) -> None:
    async with ScriptedModelServer([Turn.text("Something small.")]) as scripted:
        model = OpenAIChatModel("qwen-test", provider="vllm", base_url=scripted.base_url, api_key="k")
        answer = await describe_media(trusted_asker, model)
        content: list[dict[str, Any]] = scripted.requests[0].last_message["content"]

    assert all(part["type"] == "text" for part in content)
    assert content[1]["text"].startswith("Attached an image (image/png, 70 bytes; ")
    assert content[1]["text"].endswith("not shown: this model does not take images).")
    assert answer["content"]["text"] == "Something small."


async def test_tool_arguments_nested_past_the_stack_reach_the_server_unparsed(trusted_asker: Config) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    async with ScriptedModelServer([Turn.tool_calls(ToolCallSpec("lookup", deep))]) as scripted:
        model = OpenAIChatModel("gpt-test", provider="openai", base_url=scripted.base_url, api_key="k")
        answer = await describe_media(trusted_asker, model, offer_lookup=True)

    assert answer["stopReason"] == "toolUse"
    assert answer["content"][-1]["input"] == {"_unparsed": deep}
