"""The npm `@modelcontextprotocol/server-everything` asking toolbridge: for a completion, a long form
(every field kind, with defaults), and its roots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as mcp
import pytest

from toolbridge.agent import Agent
from toolbridge.agent.asking import ElicitationRequest, SamplingRequest
from toolbridge.config import Config
from toolbridge.models import ModelRequest
from toolbridge.testing import FunctionModel
from toolbridge.tools import ToolPipeline
from toolbridge.types import ToolCall, ToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.published]


async def run_call(agent: Agent, call: ToolCall) -> ToolResult:
    """`call` through the pipeline over the agent's tools, as a library program calls."""
    return (await ToolPipeline(agent.registry).call(call)).result


class Person:
    def __init__(self) -> None:
        self.forms: list[ElicitationRequest] = []

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        return request.server == "everything"

    async def elicit(self, request: ElicitationRequest) -> mcp.ElicitResult:
        self.forms.append(request)
        return mcp.ElicitResult(action="accept", content={"name": "Ada Lovelace", "check": True})

    def elicitation_completed(self, server: str, elicitation_id: str) -> None:
        pass


async def test_server_everything_samples_elicits_and_lists_roots(
    published_server: Any, tmp_path: Path
) -> None:
    def reply(request: ModelRequest) -> str:
        return f"sampled at temperature {request.settings.temperature}"

    person = Person()
    config = Config(servers={"everything": published_server("server-everything", name="everything")})
    agent = Agent.from_config(config, model=FunctionModel(reply), asker=person, roots=[str(tmp_path)])
    async with agent:
        sampled = await run_call(agent, ToolCall(name="trigger-sampling-request", arguments={"prompt": "hi"}))
        elicited = await run_call(agent, ToolCall(name="trigger-elicitation-request"))
        roots = await run_call(agent, ToolCall(name="get-roots-list"))

    assert "sampled at temperature 0.7" in sampled.text
    raw = json.loads(elicited.text.split("Raw result:", 1)[1])
    # Untouched fields come back with the schema's defaults.
    assert raw["content"]["firstLine"] == "It was a dark and stormy night."
    assert raw["content"]["integer"] == 42
    assert raw["content"]["untitledMultipleSelectEnum"] == ["Guitar"]
    assert raw["content"]["name"] == "Ada Lovelace"
    form = person.forms[0].form
    assert form is not None
    assert len(form.fields) == 13
    assert tmp_path.as_uri() in roots.text
