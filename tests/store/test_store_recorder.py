"""What a run's calls write into the call log: every outcome by its error kind, not by its text, with
the run's caller, chat and user.

A real agent run against the scripted model over the OpenAI wire, with native tools, its calls logged by
the pipeline's observer (`CallLog`) and its messages by the recorder, the way the server and the CLI do.
"""

from __future__ import annotations

import pytest

from tool_helpers import shout, wait_forever
from toolbridge.agent import Agent, ApprovalRequest, ToolCallStartedEvent
from toolbridge.models import OpenAIChatModel
from toolbridge.runs.recorder import RunRecorder
from toolbridge.store import CallLog, Store
from toolbridge.testing import ScriptedModelServer, ToolCallSpec, Turn
from toolbridge.tools import FunctionTool, ToolPipeline, ToolRegistry, native_tools
from toolbridge.types import ToolAnnotations

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    return f"deleted {path}"


async def test_declined_failed_unknown_and_cancelled_calls_are_logged_by_kind(store: Store) -> None:
    destructive = FunctionTool.from_function(delete_file, annotations=ToolAnnotations(destructive_hint=True))
    turns = [
        Turn.tool_calls(
            ToolCallSpec("delete_file", {"path": "/tmp/x"}),
            ToolCallSpec("shout", {"words": "hi"}),
            ToolCallSpec("no_such_tool", {}),
            ToolCallSpec("calculate", {"expression": "6 * 7"}),
            ToolCallSpec("get_current_time", "[1, 2]"),
        ),
        Turn.tool_calls(ToolCallSpec("wait_forever", {})),
    ]

    async def decline(request: ApprovalRequest) -> bool:
        return False

    store.users.add("alice")
    alice = store.users.user_id("alice")
    chat = store.create_chat(agent="default", user_id=alice)
    registry = ToolRegistry(native=[*native_tools(), destructive, shout, wait_forever])
    calls = ToolPipeline(registry, [CallLog(store.log_tool_calls)])
    async with ScriptedModelServer(turns) as server:
        model = OpenAIChatModel("scripted", base_url=server.base_url, api_key="test", max_retries=0)
        agent = Agent(model, calls, approve=decline, chat_id=chat.id, user_id=alice)
        recorder = RunRecorder(store, chat_id=chat.id, written=0)
        async with agent.stream("Go.") as events:
            async for event in events:
                await recorder.observe(event)
                if isinstance(event, ToolCallStartedEvent) and event.call.name == "wait_forever":
                    events.cancel()
        await model.aclose()
    assert events.result is not None
    assert events.result.stop_reason == "cancelled"

    stats = {entry.tool: entry for entry in store.tool_stats(user_id=alice)}
    names = ("delete_file", "shout", "no_such_tool", "calculate", "get_current_time", "wait_forever")
    declined, bad, unknown, fine, unreadable, cancelled = (stats[name] for name in names)
    assert (declined.server, declined.denied, declined.failed, declined.success_rate) == (
        "native",
        1,
        0,
        None,
    )
    # Bad arguments count against the tool they were for, on its server.
    assert (bad.server, bad.failed, bad.success_rate) == ("native", 1, 0.0)
    assert "text" in (bad.last_error or "")
    assert (unknown.server, unknown.failed) == ("", 1)
    assert (fine.succeeded, fine.success_rate) == (1, 1.0)
    # Arguments that could not be read never reach the tool, and still count against it.
    assert (unreadable.server, unreadable.calls, unreadable.failed) == ("native", 1, 1)
    assert (cancelled.server, cancelled.calls, cancelled.cancelled, cancelled.failed) == ("native", 1, 1, 0)
    assert len(store.get_messages(chat.id)) == len(events.result.messages)
