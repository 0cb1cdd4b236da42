"""The agent: the loop from a question to an answer through any number of tool calls, its definition,
its events and approval.

    agent = Agent(model, toolbox, definition, approve=ask_user)
    result = await agent.run("What is in myfile.xlsx?")      # RunResult
    async with agent.stream("15 + 27?") as events:           # AgentEvent ..., FinalEvent
        async for event in events: ...

Servers' own requests (sampling, elicitation) reach a `UserAsker` given to `Agent.from_config(asker=...)`.
"""

from typing import TYPE_CHECKING, Any

from toolbridge.agent.approval import ApprovalRequest, Approver, approve_all
from toolbridge.agent.definition import (
    AgentDefinition,
    ApprovalPolicy,
    ApprovalRule,
    ToolFilter,
    load_agent_definition,
)
from toolbridge.agent.events import (
    AgentEvent,
    ApprovalDecidedEvent,
    ApprovalRequestedEvent,
    FinalEvent,
    InvalidToolCallEvent,
    MessageAddedEvent,
    ReasoningDeltaEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextDeltaEvent,
    ToolCallFinishedEvent,
    ToolCallProgressEvent,
    ToolCallStartedEvent,
    ToolModeChangedEvent,
    parse_event,
)
from toolbridge.agent.result import RunResult, StopReason, ToolCallRecord

__all__ = [
    "Agent",
    "AgentDefinition",
    "AgentEvent",
    "AgentStream",
    "ApprovalDecidedEvent",
    "ApprovalPolicy",
    "ApprovalRequest",
    "ApprovalRequestedEvent",
    "ApprovalRule",
    "Approver",
    "ElicitationRequest",
    "FinalEvent",
    "InvalidToolCallEvent",
    "MessageAddedEvent",
    "NobodyToAsk",
    "ReasoningDeltaEvent",
    "RunResult",
    "SamplingRequest",
    "StepFinishedEvent",
    "StepStartedEvent",
    "StopReason",
    "TextDeltaEvent",
    "ToolCallFinishedEvent",
    "ToolCallProgressEvent",
    "ToolCallRecord",
    "ToolCallStartedEvent",
    "ToolFilter",
    "ToolModeChangedEvent",
    "UserAsker",
    "approve_all",
    "load_agent_definition",
    "parse_event",
]

if TYPE_CHECKING:
    from toolbridge.agent.agent import Agent, AgentStream
    from toolbridge.agent.asking import ElicitationRequest, NobodyToAsk, SamplingRequest, UserAsker

_ASKING = ("ElicitationRequest", "NobodyToAsk", "SamplingRequest", "UserAsker")


def __getattr__(name: str) -> Any:
    # `Agent` brings the tools layer and the MCP SDK with it; definitions and events do not need them.
    if name in ("Agent", "AgentStream"):
        from toolbridge.agent import agent

        return getattr(agent, name)
    if name in _ASKING:  # what servers ask of the person: they bring the MCP types
        from toolbridge.agent import asking

        return getattr(asking, name)
    raise AttributeError(f"module 'toolbridge.agent' has no attribute {name!r}")
