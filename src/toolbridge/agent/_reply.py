"""Reading one streamed reply: text and reasoning out to the user as they come, tool calls collected.

The model behind the loop is a `ToolCallingModel` (see `toolbridge.models.tool_calling`): whatever the
tool mode, its events are native-style, calls written in text already turned into `ToolCallDelta`s and
the stream already closed after complete calls. So this module reads one kind of stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from toolbridge.agent.events import AgentEvent, ReasoningDeltaEvent, TextDeltaEvent, ToolModeChangedEvent
from toolbridge.models import (
    Finish,
    InvalidToolCall,
    Model,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallCollector,
    ToolCallDelta,
    ToolModeChanged,
    UsageReport,
)
from toolbridge.types import ToolCall, ToolErrorKind, ToolResult, Usage

__all__ = ["Emit", "Reply", "read_reply"]

Emit = Callable[[AgentEvent], Awaitable[None]]


@dataclass
class Reply:
    """One model reply, as far as it was read."""

    content: str = ""
    reasoning: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    failed_calls: dict[str, ToolResult] = field(default_factory=dict)
    """Calls that cannot run (unreadable arguments, no name), by call id, with the error the model gets."""
    invalid_calls: list[InvalidToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    closed_early: bool = False

    @property
    def made_calls(self) -> bool:
        return bool(self.calls or self.invalid_calls)


async def read_reply(model: Model, request: ModelRequest, *, step: int, emit: Emit | None) -> Reply:
    """Stream one reply. Raises `ModelError` as the model raises it."""
    reply = Reply()
    content: list[str] = []
    reasoning: list[str] = []
    collector = ToolCallCollector()

    async def send(event: AgentEvent) -> None:
        if emit is not None:
            await emit(event)

    async with model.stream(request) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                content.append(event.text)
                await send(TextDeltaEvent(step=step, text=event.text))
            elif isinstance(event, ReasoningDelta):
                reasoning.append(event.text)
                await send(ReasoningDeltaEvent(step=step, text=event.text))
            elif isinstance(event, ToolCallDelta):
                collector.add(event)
            elif isinstance(event, InvalidToolCall):
                reply.invalid_calls.append(event)
            elif isinstance(event, ToolModeChanged):
                await send(ToolModeChangedEvent(step=step, tool_mode=event.tool_mode, reason=event.reason))
            elif isinstance(event, Finish):
                reply.finish_reason = event.reason
                reply.closed_early = event.closed_early
            elif isinstance(event, UsageReport):
                reply.usage = reply.usage + event.usage
    for collected in collector.calls(truncated=reply.finish_reason == "length"):
        reply.calls.append(collected.call)
        if collected.problem is not None:
            kind: ToolErrorKind = "cut_off" if collected.cut_off else "invalid_arguments"
            failure = ToolResult.error(collected.call.id, collected.problem, kind=kind)
            reply.failed_calls[collected.call.id] = failure
    joined = "".join(content)
    reply.content = joined.rstrip() if reply.made_calls else joined
    reply.reasoning = "".join(reasoning)
    return reply
