"""Structured output: a tool's `outputSchema` is kept in its spec, its `structuredContent` is checked
against it, and the model, which takes text, gets it as JSON text."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from agent_helpers import scripted_agent, tool_messages

from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.testing import ToolCallSpec, Turn
from toolbridge.tools import Toolbox

pytestmark = pytest.mark.anyio


async def test_structured_output_is_checked_and_reaches_the_model_as_json(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    calls = [
        ToolCallSpec("weather_data", {"city": "Oslo"}),
        ToolCallSpec("broken_weather", {"city": "Bergen"}),
    ]
    async with Toolbox(Config(servers={"reports": stdio_server("reports")})) as toolbox:
        specs = {spec.name: spec for spec in await toolbox.list_tools()}
        async with scripted_agent([Turn.tool_calls(*calls), Turn.text("Cold.")], tools=toolbox) as (
            agent,
            model,
        ):
            await agent.run("Weather?")

    assert specs["weather_data"].output_schema is not None
    assert specs["weather_data"].output_schema["required"] == ["city", "celsius"]
    good, broken = (message["content"] for message in tool_messages(model.requests[1]))
    assert json.loads(good) == {"city": "Oslo", "celsius": 3.5}
    assert "returned an invalid result for 'broken_weather'" in broken
    assert "'warm' is not of type 'number'" in broken
    assert "Failed validating" not in broken  # the first line of the validator's report, not the schema
