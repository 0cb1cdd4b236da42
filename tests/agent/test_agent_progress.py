"""Progress a server reports on a call the agent runs comes out of the stream as typed events, between
the call's start and its end."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from agent_helpers import agent_for

from toolbridge.agent import (
    AgentEvent,
    ToolCallFinishedEvent,
    ToolCallProgressEvent,
    ToolCallStartedEvent,
    parse_event,
)
from toolbridge.config import Config
from toolbridge.config.model import ServerConfig
from toolbridge.testing import FunctionModel
from toolbridge.tools import Toolbox
from toolbridge.types import ToolCall

pytestmark = pytest.mark.anyio


async def test_progress_reports_are_events_between_the_calls_start_and_end(
    stdio_server: Callable[..., ServerConfig],
) -> None:
    model = FunctionModel.replying(ToolCall(name="crunch", arguments={"steps": 2, "step_ms": 1}), "Done.")
    events: list[AgentEvent] = []
    async with Toolbox(Config(servers={"reports": stdio_server("reports")})) as toolbox:
        stream = agent_for(model, tools=toolbox).stream("Crunch it.")
        async with stream as events_of_the_run:
            events = [event async for event in events_of_the_run]

    kinds = [
        type(e)
        for e in events
        if isinstance(e, ToolCallStartedEvent | ToolCallProgressEvent | ToolCallFinishedEvent)
    ]
    assert kinds == [
        ToolCallStartedEvent,
        ToolCallProgressEvent,
        ToolCallProgressEvent,
        ToolCallFinishedEvent,
    ]
    progress = [e for e in events if isinstance(e, ToolCallProgressEvent)]
    assert [(e.name, e.server, e.percent, e.message) for e in progress] == [
        ("crunch", "reports", 50, "step 1 of 2"),
        ("crunch", "reports", 100, "step 2 of 2"),
    ]
    assert parse_event(progress[0].model_dump_json()) == progress[0]
