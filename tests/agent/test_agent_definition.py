"""Agent definitions from the config's `agents` section, the approval policy, tool filters, and the
ways to build and run an agent (from a config, synchronously)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_helpers import agent_for, results_sent

from toolbridge.agent import Agent, AgentDefinition, ApprovalPolicy, load_agent_definition
from toolbridge.config import parse_config
from toolbridge.errors import ConfigError
from toolbridge.models import OpenAIChatModel
from toolbridge.testing import FunctionModel, ScriptedModelServer, ToolCallSpec, Turn
from toolbridge.types import SystemMessage, ToolAnnotations, ToolCall, ToolSpec


def config(agents: Any, path: str = "/home/me/toolbridge.json") -> Any:
    return parse_config({"agents": agents, "mcpServers": {"excel": {"command": "excel-mcp"}}}, path=path)


def test_a_definition_is_read_with_every_key() -> None:
    definition = load_agent_definition(
        config(
            {
                "excel-helper": {
                    "description": "Answers questions about spreadsheets.",
                    "instructions": "Be brief.",
                    "model": "gpt-4o",
                    "toolCalling": True,
                    "tool_mode": "prompt",
                    "servers": ["excel"],
                    "tools": {"allow": ["read_*"], "deny": ["read_vba"]},
                    "maxSteps": 4,
                    "max_result_chars": 5000,
                    "call_timeout": 30,
                    "approval": {"default": "never", "servers": {"excel": "always"}},
                }
            }
        ),
        "excel-helper",
    )
    assert definition.name == "excel-helper"
    assert definition.max_steps == 4
    assert definition.tool_mode == "prompt"
    assert definition.call_timeout == 30
    assert definition.tools.allows(ToolSpec(name="read_range", source="excel"))
    assert not definition.tools.allows(ToolSpec(name="read_vba", source="excel"))
    assert not definition.tools.allows(ToolSpec(name="write_range", source="excel"))


def test_without_an_agents_section_the_built_in_default_agent_is_used() -> None:
    definition = load_agent_definition(parse_config({}))
    assert definition == AgentDefinition()
    assert (definition.max_steps, definition.max_result_chars) == (10, 20_000)


def test_an_agent_named_default_replaces_the_built_in_one() -> None:
    assert load_agent_definition(config({"default": {"max_steps": 3}})).max_steps == 3


@pytest.mark.parametrize(
    ("agents", "name", "expected"),
    [
        (
            {"helper": {"max_stesp": 3}},
            "helper",
            "agents.helper.max_stesp: unknown key; did you mean 'max_steps'?",
        ),
        (
            {"helper": {"max_steps": 0}},
            "helper",
            "agents.helper.max_steps: Input should be greater than or equal to 1",
        ),
        ({"helper": {"approval": {"tools": {"x": "sometimes"}}}}, "helper", "agents.helper.approval.tools.x"),
        ({"helper": "be nice"}, "helper", "agents.helper: expected an object"),
        ({"helper": {}}, "helpr", "no agent named 'helpr'; did you mean 'helper'?"),
    ],
)
def test_errors_name_the_file_the_agent_and_the_key(agents: Any, name: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_agent_definition(config(agents), name)
    assert str(caught.value).startswith("/home/me/toolbridge.json: ")
    assert expected in str(caught.value)


def spec(name: str, source: str = "excel", **hints: bool) -> ToolSpec:
    return ToolSpec(name=name, source=source, annotations=ToolAnnotations(**hints))


def test_approval_follows_the_hints_unless_a_rule_says_otherwise() -> None:
    policy = ApprovalPolicy()
    assert (
        policy.approval_reason(spec("write_range", destructive_hint=True))
        == "the tool is marked as destructive"
    )
    assert policy.approval_reason(spec("read_range", read_only_hint=True)) is None
    assert policy.approval_reason(spec("format_range")) is None
    # readOnlyHint wins over a contradicting destructiveHint, as the MCP spec says.
    assert policy.approval_reason(spec("odd", read_only_hint=True, destructive_hint=True)) is None

    strict = ApprovalPolicy(tools={"write_range": "never", "copy_*": "always"}, servers={"excel": "always"})
    assert strict.approval_reason(spec("write_range", destructive_hint=True)) is None
    assert strict.approval_reason(spec("copy_sheet")) == "the approval rule for tools 'copy_*' says 'always'"
    assert strict.approval_reason(spec("read_range", read_only_hint=True)) == (
        "the approval rule for server 'excel' says 'always'"
    )
    assert strict.approval_reason(spec("calculate", source="native")) is None


def test_the_agent_offers_only_its_servers_and_allowed_tools() -> None:
    definition = AgentDefinition(servers=["excel"], tools={"deny": ["delete_*"]})
    offered = definition.select_tools(
        [
            spec("read_range"),
            spec("delete_sheet"),
            spec("search", source="web"),
            spec("calculate", source="native"),
        ]
    )
    assert [tool.name for tool in offered] == ["read_range", "calculate"]
    assert AgentDefinition(tool_calling=False).select_tools([spec("read_range")]) == []


@pytest.mark.anyio
async def test_a_denied_tool_is_neither_offered_nor_run() -> None:
    model = FunctionModel.replying(ToolCall(name="calculate", arguments={"expression": "1 + 1"}), "I cannot.")
    definition = AgentDefinition(instructions="Be brief.", tools={"deny": ["calculate"]})
    result = await agent_for(model, definition=definition).run("1 + 1?")

    assert [tool.name for tool in model.requests[0].tools] == ["get_current_time"]
    assert "Be brief." in str(model.requests[0].messages[0])
    refusal = results_sent(model.requests[1])[0]
    # The model is told the tool exists but is not its to use, in the words every surface uses.
    assert refusal.error_kind == "not_allowed"
    assert refusal.text.startswith("Tool 'calculate' is not allowed here (the agent 'default''s tool rules")
    assert result.tool_calls[0].ran is False


@pytest.mark.anyio
async def test_an_agent_without_tool_calling_is_a_plain_chat() -> None:
    markup = '<tool_call>{"name": "calculate", "arguments": {"expression": "1"}}</tool_call>'
    model = FunctionModel.replying(f"Here is how a call looks: {markup}")
    result = await agent_for(model, definition=AgentDefinition(tool_calling=False)).run(
        "Show me a tool call."
    )

    assert not model.requests[0].tools
    assert result.output.endswith(markup)
    assert result.tool_calls == []
    assert result.tool_mode == "none"


@pytest.mark.anyio
async def test_from_config_builds_the_named_agent_with_its_toolbox(tmp_path: Path) -> None:
    document = {"agents": {"counter": {"instructions": "You count things.", "tools": ["calculate"]}}}
    model = FunctionModel.replying("Ready.")
    async with Agent.from_config(
        parse_config(document, path=tmp_path / "c.json"), name="counter", model=model
    ) as agent:
        result = await agent.run("Hi")

    assert agent.definition.name == "counter"
    assert [tool.name for tool in model.requests[0].tools] == ["calculate"]
    system = model.requests[0].messages[0]
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("You are counter.\n\nYou count things.")
    assert result.output == "Ready."


def test_run_sync_runs_the_loop_for_scripts() -> None:
    script = [Turn.tool_calls(ToolCallSpec("calculate", {"expression": "15 + 27"})), Turn.text("42")]
    with ScriptedModelServer(script) as server:
        agent = Agent(OpenAIChatModel("m", base_url=server.base_url, api_key="test", max_retries=0))
        result = agent.run_sync("15 + 27?")

    assert result.output == "42"
    assert result.tool_calls[0].result.text == "42"


@pytest.mark.anyio
async def test_from_config_resolves_the_definitions_model_by_name() -> None:
    document = {"agents": {"default": {"model": "demo", "tool_mode": "prompt"}}}
    async with Agent.from_config(parse_config(document)) as agent:
        result = await agent.run("What is 15 + 27?")

    assert agent.model.name == "demo"
    assert result.tool_mode == "prompt"
    assert [record.result.text for record in result.tool_calls] == ["42"]
    assert "42" in result.output


def test_from_config_runs_synchronously_without_async_with() -> None:
    # The one-liner a script reaches for first: the toolbox opens for the run and closes after it.
    agent = Agent.from_config(parse_config({}), model="demo")
    result = agent.run_sync("What is 15 + 27?")
    assert result.output == "[demo model] 15 + 27 = 42"
    assert agent.run_sync("What is 2 * 21?").output == "[demo model] 2 * 21 = 42"  # and again
