"""Attachments: resources read from a real server go with the prompt (`agent.run(..., attachments=)`) and
reach each model API as content parts: text inline, images as images where the model takes them, other
blobs described by name, type and size."""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest

from toolbridge.agent import Agent, AgentDefinition
from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.models import AnthropicModel, OpenAIChatModel, PromptToolsModel
from toolbridge.testing import FunctionModel, ScriptedAnthropicServer, ScriptedModelServer, Turn
from toolbridge.tools import Toolbox
from toolbridge.types import (
    AssistantMessage,
    ResourcePart,
    TextPart,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
)

pytestmark = pytest.mark.anyio

NO_TOOLS = AgentDefinition(tool_calling=False)
EARLIER_CALL = [
    UserMessage(content="15 + 27?"),
    AssistantMessage(
        tool_calls=[ToolCall(id="call_1", name="calculate", arguments={"expression": "15 + 27"})]
    ),
    ToolMessage(name="calculate", result=ToolResult(call_id="call_1", content=[TextPart(text="42")])),
]


async def read_attachments(toolbox: Toolbox) -> list[ResourcePart]:
    parts: list[ResourcePart] = []
    for uri in ("note://readme", "image://dot.png", "data://table.bin"):
        parts += await toolbox.content.read(uri)
    return parts


@pytest.fixture
def library(stdio_server: Callable[..., ServerConfig]) -> Config:
    return Config(servers={"library": stdio_server("library")})


@pytest.mark.parametrize(("provider", "takes_images"), [("openai", True), ("vllm", False)])
async def test_resources_attached_to_a_prompt_reach_an_openai_compatible_model_as_content_parts(
    library: Config, provider: str, takes_images: bool
) -> None:
    async with Toolbox(library) as toolbox, ScriptedModelServer([Turn.text("A dot.")]) as scripted:
        attachments = await read_attachments(toolbox)
        model = OpenAIChatModel("m", provider=provider, base_url=scripted.base_url, api_key="k")
        async with Agent(model, toolbox.registry, NO_TOOLS) as agent:
            result = await agent.run("What are these?", attachments=attachments)
        await model.aclose()
        content: list[dict[str, Any]] = scripted.requests[0].messages[-1]["content"]

    assert result.output == "A dot."
    assert content[0] == {"type": "text", "text": "What are these?"}
    assert content[1] == {"type": "text", "text": "Attached note://readme (text/plain):\nRead me first."}
    if takes_images:
        assert content[2] == {"type": "text", "text": "Attached image://dot.png:"}
        assert content[3]["type"] == "image_url"
        assert content[3]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    else:
        assert content[2]["text"].startswith("Attached image://dot.png (image/png, 70 bytes; not shown")
    assert content[-1] == {
        "type": "text",
        "text": "Attached data://table.bin (application/octet-stream, 10 bytes; not shown: binary content).",
    }
    # The attachments stay with the question in the run's messages, for the next turn.
    assert result.messages[0] == UserMessage(content="What are these?", attachments=attachments)


async def test_an_image_attachment_reaches_claude_as_an_image_block() -> None:
    pixel = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()
    attachment = ResourcePart(uri="file:///tmp/a.png", mime_type="image/png", blob=pixel)
    async with ScriptedAnthropicServer([Turn.text("A pixel.")]) as scripted:
        model = AnthropicModel("claude-test", base_url=scripted.base_url, api_key="sk-ant-test")
        async with Agent(model, None, NO_TOOLS) as agent:
            await agent.run("What is it?", attachments=[attachment])
        await model.aclose()
        sent = scripted.requests[0].body["messages"][-1]

    assert sent == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is it?"},
            {"type": "text", "text": "Attached file:///tmp/a.png:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": pixel}},
        ],
    }


async def test_attachments_survive_prompt_mode_after_tool_results() -> None:
    # In prompt mode, results and the next question are merged into one user message: the question's
    # attachments must come along.
    note = ResourcePart(uri="note://a", mime_type="text/plain", text="alpha")
    model = FunctionModel.replying("ok")
    wrapped = PromptToolsModel(model)
    async with Agent(wrapped, None, AgentDefinition(tool_mode="prompt")) as agent:
        await agent.run("Read it.", history=EARLIER_CALL, attachments=[note])
    last = model.requests[0].messages[-1]
    assert isinstance(last, UserMessage)
    assert last.content.startswith("<tool_result")
    assert last.content.endswith("Read it.")
    assert last.attachments == [note]
