"""The agent: the loop from a question to an answer through any number of tool calls, its definition,
its events and approval.

    agent = Agent(model, toolbox, definition, approve=ask_user)
    result = await agent.run("What is in myfile.xlsx?")      # RunResult
    async with agent.stream("15 + 27?") as events:           # AgentEvent ..., FinalEvent
        async for event in events: ...
"""

from toolbridge.agent.agent import Agent, AgentStream
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
    "FinalEvent",
    "InvalidToolCallEvent",
    "MessageAddedEvent",
    "ReasoningDeltaEvent",
    "RunResult",
    "StepFinishedEvent",
    "StepStartedEvent",
    "StopReason",
    "TextDeltaEvent",
    "ToolCallFinishedEvent",
    "ToolCallRecord",
    "ToolCallStartedEvent",
    "ToolFilter",
    "ToolModeChangedEvent",
    "approve_all",
    "load_agent_definition",
    "parse_event",
]
