"""Reading one streamed reply: text and reasoning out to the user, tool calls collected, and the stream
closed as soon as the calls are complete and the model starts writing anything else.

All text content goes through the parser, in both tool modes: in prompt mode that is how calls are
written; in native mode it recovers calls that a server's own tool parser failed to extract (Qwen and
Hermes models behind vLLM or Ollama), so markup is never shown as the answer. Native call deltas are
assembled by index. Only model output is ever parsed: never a tool result or a user message.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import json_repair

from toolbridge.agent.events import AgentEvent, ReasoningDeltaEvent, TextDeltaEvent
from toolbridge.models.base import (
    Finish,
    Model,
    ModelRequest,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    UsageReport,
)
from toolbridge.parsing import Event as ParserEvent
from toolbridge.parsing import ParseError, StreamParser, ToolCallEnd
from toolbridge.parsing import ReasoningDelta as ParsedReasoning
from toolbridge.parsing import TextDelta as ParsedText
from toolbridge.types import ToolCall, ToolResult, Usage

__all__ = ["Emit", "InvalidCall", "Reply", "read_reply"]

Emit = Callable[[AgentEvent], Awaitable[None]]

_RAW_PREVIEW = 500


@dataclass(frozen=True)
class InvalidCall:
    """Text that looked like a call but could not be read. It has no id, so it is not a `ToolCall`."""

    message: str
    raw: str


@dataclass
class Reply:
    """One model reply, as far as it was read."""

    content: str = ""
    reasoning: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    failed_calls: dict[str, ToolResult] = field(default_factory=dict)
    """Native calls whose arguments could not be decoded, by call id, with the error the model gets."""
    invalid_calls: list[InvalidCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    closed_early: bool = False

    @property
    def made_calls(self) -> bool:
        return bool(self.calls or self.invalid_calls)


async def read_reply(
    model: Model, request: ModelRequest, *, step: int, emit: Emit | None, find_calls: bool = True
) -> Reply:
    """Stream one reply. Raises `ModelError` (and `ToolsNotSupportedError`) as the model raises them.

    `find_calls=False` (an agent without tools) shows the text as it is, markup or not.
    """
    reader = _ReplyReader(step, emit)
    async with model.stream(request) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                parsed = reader.parser.feed(event.text) if find_calls else [ParsedText(event.text)]
                if not await reader.take(parsed):
                    reader.reply.closed_early = True
                    break
            elif isinstance(event, ReasoningDelta):
                if not await reader.take([ParsedReasoning(event.text)]):
                    reader.reply.closed_early = True
                    break
            elif isinstance(event, ToolCallDelta):
                reader.native_delta(event)
            elif isinstance(event, Finish):
                reader.reply.finish_reason = event.reason
            elif isinstance(event, UsageReport):
                reader.reply.usage = reader.reply.usage + event.usage
        else:
            if find_calls:
                await reader.take(reader.parser.finish())
    return reader.finish()


class _ReplyReader:
    def __init__(self, step: int, emit: Emit | None) -> None:
        self.parser = StreamParser()
        self.reply = Reply()
        self._step = step
        self._emit = emit
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._after_text_calls = False
        self._native: dict[int, _NativeCallParts] = {}

    async def take(self, events: Sequence[ParserEvent]) -> bool:
        """Handle parser events; False means: the calls are done and the model moved on, stop reading."""
        for event in events:
            if isinstance(event, ParsedText):
                if self._after_text_calls:
                    if event.text.strip():
                        return False
                    continue  # white space between calls
                self._content.append(event.text)
                if self._emit is not None:
                    await self._emit(TextDeltaEvent(step=self._step, text=event.text))
            elif isinstance(event, ParsedReasoning):
                if self._after_text_calls:
                    return False
                self._reasoning.append(event.text)
                if self._emit is not None:
                    await self._emit(ReasoningDeltaEvent(step=self._step, text=event.text))
            elif isinstance(event, ToolCallEnd):
                self.reply.calls.append(event.call.to_tool_call())
                self._after_text_calls = True
            elif isinstance(event, ParseError):
                self.reply.invalid_calls.append(InvalidCall(event.message, event.raw))
                self._after_text_calls = True
            # ToolCallStart and argument deltas: progress only; the finished call is what counts.
        return True

    def native_delta(self, delta: ToolCallDelta) -> None:
        parts = self._native.setdefault(delta.index, _NativeCallParts())
        parts.id = parts.id or delta.id
        parts.name = parts.name or delta.name
        parts.arguments.append(delta.arguments)

    def finish(self) -> Reply:
        reply = self.reply
        content = "".join(self._content)
        reply.content = content.rstrip() if reply.made_calls else content
        reply.reasoning = "".join(self._reasoning)
        native = [self._native[index] for index in sorted(self._native)]
        # Native calls come first: text-recovered ones only exist when the server's parser failed.
        text_calls = reply.calls
        reply.calls = []
        for parts in native:
            call, error = parts.to_call()
            reply.calls.append(call)
            if error is not None:
                reply.failed_calls[call.id] = ToolResult.error(call.id, error, kind="invalid_arguments")
        reply.calls += text_calls
        return reply


@dataclass
class _NativeCallParts:
    id: str | None = None
    name: str | None = None
    arguments: list[str] = field(default_factory=list)

    def to_call(self) -> tuple[ToolCall, str | None]:
        """The call, and the error to send back instead of running it when its arguments are unreadable."""
        name = (self.name or "").strip() or "unnamed_tool"
        raw = "".join(self.arguments)
        arguments, problem = _decode_arguments(raw)
        call = (
            ToolCall(name=name, arguments=arguments)
            if self.id is None
            else ToolCall(name=name, arguments=arguments, id=self.id)
        )
        if not self.name:
            return call, "Your tool call had no tool name, so nothing ran. Call a tool by its exact name."
        if problem is None:
            return call, None
        shown = raw if len(raw) <= _RAW_PREVIEW else raw[:_RAW_PREVIEW] + "…"
        return call, (
            f"The arguments of your call to {name!r} could not be read ({problem}), so it did not run. "
            f"You sent: {shown}\nCall it again with the arguments as one JSON object."
        )


def _decode_arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """Decode native arguments, repairing the usual slips (trailing commas, missing braces)."""
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw, strict=False)
    except ValueError as exc:
        error = str(exc)
        try:
            value = json_repair.loads(raw)
        except Exception:  # json-repair has no exception type of its own
            value = None
        if not isinstance(value, dict) or (not value and raw.strip() not in ("{}", "")):
            return {}, f"invalid JSON: {error}"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}"
    return value, None
