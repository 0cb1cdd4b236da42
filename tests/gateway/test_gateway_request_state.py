"""On 2026-07-28 a client continues a call by echoing the `requestState` the gateway gave it with its
answers: a state the gateway did not give (tampered with, made up, or of a call already ended) is refused
with an error, never run as a new call (conformance input-required-result-tampered-state)."""

from __future__ import annotations

from pathlib import Path

import mcp_types as mcp
import pytest
from _gateway import gateway, our_server
from mcp import Client
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPError

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:The .* capability is deprecated")]


async def _accept(context: ClientRequestContext, params: mcp.ElicitRequestParams) -> mcp.ElicitResult:
    return mcp.ElicitResult(action="accept", content={"name": "Ada", "age": 36})


async def test_a_request_state_the_gateway_did_not_give_is_refused(tmp_path: Path) -> None:
    async with Client(
        gateway(tmp_path, {"asks": our_server("asks_client")}), elicitation_callback=_accept
    ) as client:
        first = await client.session.call_tool("ask_contact", {}, allow_input_required=True)
        assert isinstance(first, mcp.InputRequiredResult)
        assert first.request_state is not None
        answers = {
            key: mcp.ElicitResult(action="accept", content={"name": "Ada", "age": 36})
            for key in first.input_requests
        }
        for forged in (first.request_state + "x", "made-up"):
            with pytest.raises(MCPError, match="requestState") as refused:
                await client.session.call_tool(
                    "ask_contact",
                    {},
                    input_responses=answers,
                    request_state=forged,
                    allow_input_required=True,  # type: ignore[arg-type]
                )
            assert refused.value.error.code == mcp.INVALID_PARAMS
        # The real state still continues its call, once; then it is spent.
        done = await client.session.call_tool(
            "ask_contact",
            {},
            input_responses=answers,
            request_state=first.request_state,
            allow_input_required=True,  # type: ignore[arg-type]
        )
        assert isinstance(done, mcp.CallToolResult)
        assert not done.is_error
        with pytest.raises(MCPError, match="requestState"):
            await client.session.call_tool(
                "ask_contact",
                {},
                input_responses=answers,
                request_state=first.request_state,
                allow_input_required=True,  # type: ignore[arg-type]
            )
