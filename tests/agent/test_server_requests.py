"""Servers' sampling, elicitation and roots requests answered through `Agent.from_config`, against a
real stdio server written with the official SDK (tests/servers/asks_client.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as mcp
import pytest

from toolbridge.agent import Agent
from toolbridge.agent.asking import ElicitationRequest, SamplingRequest
from toolbridge.config import Config
from toolbridge.config.asks import SamplingConfig
from toolbridge.config.model import ServerConfig
from toolbridge.config.sections import ModelConfig
from toolbridge.models import ModelRequest, ModelSettings
from toolbridge.testing import FunctionModel
from toolbridge.tools import ToolPipeline
from toolbridge.types import SystemMessage, ToolCall, ToolResult, UserMessage

pytestmark = pytest.mark.anyio


async def run_call(agent: Agent, call: ToolCall) -> ToolResult:
    """`call` through the pipeline over the agent's tools, as a library program calls."""
    return (await ToolPipeline(agent.registry).call(call)).result


class Person:
    """A scripted person: approves sampling as told, fills in forms with `answers`."""

    def __init__(
        self, *, approve: bool = True, action: str = "accept", answers: dict[str, Any] | None = None
    ):
        self.approve = approve
        self.action = action
        self.answers = answers or {}
        self.sampling: list[SamplingRequest] = []
        self.elicitations: list[ElicitationRequest] = []
        self.completed: list[tuple[str, str]] = []
        self.completion_arrived = anyio.Event()

    async def approve_sampling(self, request: SamplingRequest) -> bool:
        self.sampling.append(request)
        return self.approve

    async def elicit(self, request: ElicitationRequest) -> mcp.ElicitResult:
        self.elicitations.append(request)
        content = self.answers if self.action == "accept" and request.form is not None else None
        return mcp.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]

    def elicitation_completed(self, server: str, elicitation_id: str) -> None:
        self.completed.append((server, elicitation_id))
        self.completion_arrived.set()


def config_with(server: ServerConfig, **models: ModelConfig) -> Config:
    return Config(servers={server.name: server}, models=models)


async def call(agent: Agent, tool: str, arguments: dict[str, Any]) -> str:
    result = await run_call(agent, ToolCall(name=tool, arguments=arguments))
    return result.text


def summarizing(request: ModelRequest) -> str:
    system = request.messages[0]
    assert isinstance(system, SystemMessage)
    user = request.messages[-1]
    assert isinstance(user, UserMessage)
    return f"{system.content} / {user.content} / max {request.settings.max_tokens}"


async def test_sampling_is_answered_by_the_agents_model_after_the_person_approves(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    person = Person()
    model = FunctionModel(summarizing)
    agent = Agent.from_config(
        config_with(stdio_server("asks_client", name="asker")), model=model, asker=person
    )
    async with agent:
        text = await call(agent, "summarize", {"text": "a long text"})

    assert text == "Summarize in one line. / a long text / max 64"
    [asked] = person.sampling
    assert (asked.server, asked.model) == ("asker", model.name)
    assert asked.preview() == [("system", "Summarize in one line."), ("user", "a long text")]


async def test_declined_sampling_tells_the_server_why(stdio_server: Callable[..., ServerConfig]) -> None:
    agent = Agent.from_config(
        config_with(stdio_server("asks_client", name="asker")),
        model=FunctionModel(summarizing),
        asker=Person(approve=False),
    )
    async with agent:
        text = await call(agent, "summarize", {"text": "x"})
    assert "The user declined the sampling request of server 'asker'" in text


@pytest.mark.slow
async def test_without_anyone_to_ask_sampling_is_declined_unless_the_server_needs_no_approval(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    asking = stdio_server("asks_client", name="asker")
    async with Agent.from_config(config_with(asking), model=FunctionModel(summarizing)) as agent:
        declined = await call(agent, "summarize", {"text": "x"})
    trusted = asking.model_copy(update={"sampling": SamplingConfig(approval="never", max_tokens=16)})
    async with Agent.from_config(config_with(trusted), model=FunctionModel(summarizing)) as agent:
        answered = await call(agent, "summarize", {"text": "x"})

    assert "Sampling declined" in declined
    assert '"approval": "never"' in declined
    assert answered == "Summarize in one line. / x / max 16"  # the config's cap beats the server's 64


async def test_the_models_own_max_tokens_caps_what_a_server_asks_for(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    trusted = stdio_server("asks_client", name="asker").model_copy(
        update={"sampling": SamplingConfig(approval="never")}
    )
    model = FunctionModel(summarizing)
    model.settings = ModelSettings(max_tokens=8)
    async with Agent.from_config(config_with(trusted), model=model) as agent:
        answered = await call(agent, "summarize", {"text": "x"})
    assert answered == "Summarize in one line. / x / max 8"  # the server asked for 64


async def test_the_servers_configured_model_answers_and_the_rate_limit_refuses_the_rest(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    sampling = SamplingConfig(model="fast", approval="never", rate_limit=1)
    server = stdio_server("asks_client", name="asker").model_copy(update={"sampling": sampling})
    config = config_with(server, fast=ModelConfig(provider="demo"))
    agent_model = FunctionModel(lambda request: pytest.fail("the agent's model must not answer"))
    async with Agent.from_config(config, model=agent_model) as agent:
        first = await call(
            agent, "sample_raw", {"request": json.dumps({"messages": [["user", "hi"]], "max_tokens": 9})}
        )
        second = await call(agent, "summarize", {"text": "again"})

    assert json.loads(first)["model"] == "fast"
    assert "[demo model]" in json.loads(first)["content"]["text"]
    assert "made 1 requests in the last minute" in second
    assert "rate_limit" in second


async def test_stop_sequences_temperature_hints_and_tools_are_honoured(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    seen: list[ModelRequest] = []

    def reply(request: ModelRequest) -> list[Any]:
        seen.append(request)
        if request.tools:
            return ["Let me look.", ToolCall(id="toolu_1", name="lookup", arguments={"q": "oslo"})]
        return ["one. two. STOP three."]

    server = stdio_server("asks_client", name="asker").model_copy(
        update={"sampling": SamplingConfig(approval="never")}
    )
    config = config_with(server, small=ModelConfig(provider="demo"))
    async with Agent.from_config(config, model=FunctionModel(reply)) as agent:
        stopped = json.loads(await call(agent, "sample_raw", {"request": json.dumps({
            "messages": [["user", "count"]], "max_tokens": 50, "temperature": 0.2, "stop_sequences": ["STOP"],
        })}))  # fmt: skip
        with_tools = json.loads(await call(agent, "sample_raw", {"request": json.dumps({
            "messages": [["user", "weather?"]], "max_tokens": 50,
            "tools": [{"name": "lookup", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}],
        })}))  # fmt: skip
        hinted = json.loads(await call(agent, "sample_raw", {"request": json.dumps({
            "messages": [["user", "hi"]], "max_tokens": 5, "model_preferences": {"hints": [{"name": "sma"}]},
        })}))  # fmt: skip

    assert stopped["content"]["text"] == "one. two. "
    assert stopped["stopReason"] == "stopSequence"
    assert seen[0].settings.temperature == 0.2
    assert [tool.name for tool in seen[1].tools] == ["lookup"]
    assert with_tools["stopReason"] == "toolUse"
    assert with_tools["content"][-1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "lookup",
        "input": {"q": "oslo"},
    }
    assert hinted["model"] == "small"  # the hint named a configured model


async def test_a_form_is_answered_with_defaults_filled_in_and_checked(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    person = Person(answers={"city": "Oslo"})
    config = config_with(stdio_server("asks_client", name="asker"))
    async with Agent.from_config(config, model=FunctionModel(summarizing), asker=person) as agent:
        accepted = json.loads(await call(agent, "ask_preferences", {}))
        person.answers = {"city": "Oslo", "guests": 99}
        invalid = await call(agent, "ask_preferences", {})
        person.action = "decline"
        declined = json.loads(await call(agent, "ask_preferences", {}))

    assert accepted == {
        "action": "accept",
        "content": {"city": "Oslo", "guests": 2, "meal": "dinner", "vegetarian": False},
    }
    form = person.elicitations[0].form
    assert form is not None
    assert [(f.name, f.kind, f.required) for f in form.fields] == [
        ("city", "string", True), ("guests", "integer", False), ("vegetarian", "boolean", False),
        ("meal", "choice", False),
    ]  # fmt: skip
    assert "Guests: at most 10" in invalid
    assert declined == {"action": "decline", "content": None}


async def test_url_elicitation_is_shown_and_its_completion_reaches_the_asker(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    person = Person()
    config = config_with(stdio_server("asks_client", name="asker"))
    async with Agent.from_config(config, model=FunctionModel(summarizing), asker=person) as agent:
        answer = await call(agent, "ask_to_open", {"url": "https://example.com/login"})
        # Sent before the call's result, but notifications are handled in a task of their own.
        with anyio.fail_after(10):
            await person.completion_arrived.wait()
    assert answer == "accept"
    [asked] = person.elicitations
    assert (asked.url, asked.message, asked.elicitation_id) == (
        "https://example.com/login",
        "Sign in to continue.",
        "elicit-1",
    )
    assert person.completed == [("asker", "elicit-1")]


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("javascript:alert(document.cookie)", "its scheme is 'javascript:'"),
        ("file:///etc/passwd", "its scheme is 'file:'"),
        ("data:text/html,<script>alert(1)</script>", "its scheme is 'data:'"),
        ("vscode://extension/install", "its scheme is 'vscode:'"),
        (" javascript:alert(1)", "the URL contains spaces or control characters"),
        ("https:evil.example", "it names no host"),
    ],
)
async def test_url_elicitation_of_anything_but_an_http_page_is_refused_before_anyone_sees_it(
    stdio_server: Callable[..., ServerConfig], url: str, problem: str
) -> None:
    person = Person()
    config = config_with(stdio_server("asks_client", name="asker"))
    async with Agent.from_config(config, model=FunctionModel(summarizing), asker=person) as agent:
        result = await run_call(agent, ToolCall(name="ask_to_open", arguments={"url": url}))
    assert person.elicitations == [], "neither shown nor opened"
    assert result.is_error
    assert f"URL elicitation refused: {problem}; toolbridge only shows and opens http and https URLs" in (
        result.text
    )


async def test_without_anyone_to_ask_an_elicitation_is_declined_with_a_reason(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    config = config_with(stdio_server("asks_client", name="asker"))
    async with Agent.from_config(config, model=FunctionModel(summarizing)) as agent:
        text = await call(agent, "ask_contact", {})
    assert "Elicitation declined" in text
    assert "Who should we contact?" in text


@pytest.mark.slow
async def test_roots_come_from_the_server_or_the_agent_and_changes_are_announced(
    stdio_server: Callable[..., ServerConfig], tmp_path: Path
) -> None:
    own = stdio_server("asks_client", name="own").model_copy(update={"roots": [str(tmp_path / "own")]})
    shared = stdio_server("asks_client", name="shared")
    config = Config(servers={"own": own, "shared": shared})
    agent = Agent.from_config(config, model=FunctionModel(summarizing), roots=[str(tmp_path / "a")])
    async with agent:
        first = await run_call(agent, ToolCall(name="show_roots", source="shared"))
        its_own = await run_call(agent, ToolCall(name="show_roots", source="own"))
        await agent.set_roots([str(tmp_path / "b"), str(tmp_path / "c")])
        after = await run_call(agent, ToolCall(name="await_roots_change", source="shared"))

    assert first.text == (tmp_path / "a").as_uri()
    assert its_own.text == (tmp_path / "own").as_uri()
    assert after.text.splitlines() == [(tmp_path / "b").as_uri(), (tmp_path / "c").as_uri()]
