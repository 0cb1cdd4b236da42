"""The approval policy at the gateway: a destructive tool is asked about through the client's
elicitation, refused when the client cannot ask, and run or refused outright as `gateway.approval` says.

Each path is checked with the SDK client's default (the 2026-07-28 revision, where the gateway answers
`input_required`) and its 2025-11-25 mode (an elicitation request in the middle of the call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPError

from toolbridge.store import Store
from toolbridge.tools import refusals
from toolbridge.types import ToolSpec

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

MODES = ["auto", "legacy"]


class User:
    """Answers the gateway's approval forms with `action`, and keeps the questions."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.questions: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: mcp.ElicitRequestParams
    ) -> mcp.ElicitResult:
        self.questions.append(params.message)
        return mcp.ElicitResult(action=self.action, content={} if self.action == "accept" else None)  # type: ignore[arg-type]


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me", encoding="utf-8")
    return victim


def _text(result: mcp.CallToolResult) -> str:
    assert isinstance(result.content[0], mcp.TextContent)
    return result.content[0].text


WIPE = ToolSpec(name="wipe")


async def _wipe(
    tmp_path: Path, mode: str, user: User | None, **config: Any
) -> tuple[mcp.CallToolResult, Path]:
    victim = _victim(tmp_path)
    started = gateway(tmp_path, {"chores": our_server("chores")}, **config)
    async with Client(started, mode=mode, elicitation_callback=user) as client:  # type: ignore[arg-type]
        result = await client.call_tool("wipe", {"path": str(victim)})
        # A read-only tool is never asked about.
        assert _text(await client.call_tool("peek", {"path": str(victim)})) in {"exists", "missing"}
    return result, victim


@pytest.mark.parametrize("mode", MODES)
async def test_an_accepted_approval_form_runs_the_destructive_call(tmp_path: Path, mode: str) -> None:
    user = User("accept")
    result, victim = await _wipe(tmp_path, mode, user)
    assert not result.is_error, _text(result)
    assert not victim.exists()
    [question] = user.questions
    assert "'wipe'" in question
    assert "destructive" in question
    assert str(victim) in question


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_approval_form_returns_a_tool_error_and_the_call_never_runs(
    tmp_path: Path, mode: str, action: str
) -> None:
    user = User(action)
    result, victim = await _wipe(tmp_path, mode, user)
    assert result.is_error
    assert "The user declined this call to 'wipe'" in _text(result)
    assert victim.exists()
    assert len(user.questions) == 1
    with Store(f"sqlite:///{tmp_path / 'calls.db'}") as store:
        stats = {row.tool: row for row in store.tool_stats()}
    assert stats["wipe"].denied == 1


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_elicitation_is_refused_as_nobody_could_be_asked(
    tmp_path: Path, mode: str
) -> None:
    result, victim = await _wipe(tmp_path, mode, None)
    assert result.is_error
    # The words every surface uses (toolbridge.tools.refusals), naming the reason and what to do.
    assert _text(result) == str(refusals.unapproved(WIPE, "the tool is marked as destructive"))
    assert victim.exists()


@pytest.mark.parametrize("mode", MODES)
async def test_approval_refuse_refuses_without_asking(tmp_path: Path, mode: str) -> None:
    user = User("accept")
    result, victim = await _wipe(tmp_path, mode, user, gateway={"approval": "refuse"})
    assert result.is_error
    assert _text(result) == str(refusals.unapproved(WIPE, "the tool is marked as destructive"))
    assert victim.exists()
    assert user.questions == []


@pytest.mark.parametrize("mode", MODES)
async def test_approval_allow_runs_without_asking(tmp_path: Path, mode: str) -> None:
    user = User("decline")
    result, victim = await _wipe(tmp_path, mode, user, gateway={"approval": "allow"})
    assert not result.is_error, _text(result)
    assert not victim.exists()
    assert user.questions == []


async def test_the_agents_approval_rules_apply(tmp_path: Path) -> None:
    """The default agent's rule 'never' lets the destructive tool run unasked, even with no elicitation."""
    agents = {"default": {"approval": {"tools": {"wipe": "never"}}}}
    result, victim = await _wipe(tmp_path, "auto", None, agents=agents)
    assert not result.is_error, _text(result)
    assert not victim.exists()


async def test_the_policy_of_the_agent_named_with_agent_applies(tmp_path: Path) -> None:
    """Its rule 'always' asks even about a read-only tool; without --agent the default agent's rule holds."""
    agents = {"careful": {"approval": {"default": "always"}}}
    user = User("decline")
    async with Client(
        gateway(tmp_path, {"chores": our_server("chores")}, agent="careful", agents=agents),
        elicitation_callback=user,
    ) as client:
        peeked = await client.call_tool("peek", {"path": str(tmp_path)})
    assert peeked.is_error
    [question] = user.questions
    assert "the default approval rule says 'always'" in question


async def test_an_answer_the_gateway_did_not_ask_for_is_not_an_approval(tmp_path: Path) -> None:
    """On 2026-07-28 a client cannot skip the question by sending a made-up answer with its first call:
    a `requestState` the gateway never gave is refused, and nothing runs."""
    victim = _victim(tmp_path)
    made_up = {"toolbridge_approval": mcp.ElicitResult(action="accept", content={})}
    user = User("accept")
    async with Client(
        gateway(tmp_path, {"chores": our_server("chores")}), elicitation_callback=user
    ) as client:
        with pytest.raises(MCPError, match="requestState"):
            await client.session.call_tool(
                "wipe",
                {"path": str(victim)},
                input_responses=made_up,  # type: ignore[arg-type]
                request_state="forged",
                allow_input_required=True,
            )
    assert user.questions == []
    assert victim.exists()
