"""On 2026-07-28 a call to a server of the 2025 revisions (whose questions come mid-call) runs parked (in
a task of its own, between the client's rounds) only when its client could answer the server's question:
the plain call of a client that offers no sampling, elicitation or roots runs in its own request, as on
the 2025 revisions. (A 2026-07-28 server's questions go to the client as it asked them, unparked:
test_gateway_passthrough.py.)"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as mcp
import pytest
from mcp import Client
from mcp.client.context import ClientRequestContext

from server_paths import test_server_path
from toolbridge.config.model import Config, ServerConfig
from toolbridge.gateway import ClientCalls, Gateway, gateway_features
from toolbridge.gateway._parking import ParkingLot
from toolbridge.tools import Toolbox

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:The .* capability is deprecated")]


class ParkingSpy:
    """Counts the calls the gateway parks."""

    def __init__(self, lot: ParkingLot, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parked: list[str] = []
        start = lot.start

        def counting_start(call: Any, *args: Any) -> Any:
            self.parked.append(call.name)
            return start(call, *args)

        monkeypatch.setattr(lot, "start", counting_start)


async def _sample(
    context: ClientRequestContext, params: mcp.CreateMessageRequestParams
) -> mcp.CreateMessageResult:
    return mcp.CreateMessageResult(
        role="assistant", content=mcp.TextContent(type="text", text="short"), model="m"
    )


async def test_only_a_client_that_can_be_asked_has_its_calls_parked(monkeypatch: pytest.MonkeyPatch) -> None:
    upstream = ServerConfig(
        name="revisions",
        transport="stdio",
        command=sys.executable,
        args=[test_server_path("revisions")],
        protocol="2025-11-25",  # it asks mid-call
    )
    calls = ClientCalls()
    async with Toolbox(Config(servers={"revisions": upstream}), features=gateway_features(calls)) as toolbox:
        gateway = Gateway(toolbox, calls=calls)
        spy = ParkingSpy(calls.parking, monkeypatch)
        with anyio.fail_after(60):
            async with Client(gateway.server) as plain:
                assert plain.protocol_version == "2026-07-28"
                declined = await plain.call_tool("summarize", {"text": "a long text"})
            assert spy.parked == []  # not even for a tool whose server asks: this client cannot answer
            assert declined.is_error
            assert isinstance(declined.content[0], mcp.TextContent)
            assert "does not offer sampling" in declined.content[0].text

            async with Client(gateway.server, sampling_callback=_sample) as asked:  # type: ignore[arg-type]
                summary = await asked.call_tool("summarize", {"text": "a long text"})
            assert spy.parked == ["summarize"]
            assert not summary.is_error
