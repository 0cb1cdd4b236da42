"""A turn rendered in the OpenAI chat-completions wire format: SSE chunks or one ChatCompletion.

The shapes follow what the `openai` SDK parses (`ChatCompletionChunk`, `ChatCompletion`): a first
chunk with the role, one chunk per scripted piece, a chunk with the finish reason, an optional usage
chunk with no choices, then `data: [DONE]`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ._script import Segment, Turn

__all__ = ["ReplyHeader", "SseEvent", "completion_body", "error_body", "stream_events"]


@dataclass(frozen=True)
class ReplyHeader:
    """The fields every chunk of one reply repeats."""

    completion_id: str
    model: str
    created: int


@dataclass(frozen=True)
class SseEvent:
    data: bytes
    delay: float = 0.0
    """Seconds to wait before sending it."""
    segment: int | None = None
    """The index of the scripted segment it carries, if any."""
    ends_segment: bool = False


def error_body(message: str, *, error_type: str = "server_error", code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def stream_events(turn: Turn, header: ReplyHeader, *, include_usage: bool) -> list[SseEvent]:
    def chunk(delta: dict[str, Any] | None, finish_reason: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "id": header.completion_id,
            "object": "chat.completion.chunk",
            "created": header.created,
            "model": header.model,
            "system_fingerprint": None,
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }
        if include_usage:
            body["usage"] = None  # as OpenAI does: null on every chunk but the last
        return body

    events = [_event(chunk({"role": "assistant", "content": ""}))]
    call_index = 0
    for segment_index, segment in enumerate(turn.segments):
        if segment.kind == "stream_error":
            message = segment.pieces[0] if segment.pieces else "stream error"
            events.append(_event(error_body(message), segment.delay, segment_index, ends_segment=True))
            return events  # a broken stream ends without a finish reason or [DONE]
        deltas = _deltas(segment, call_index)
        for position, delta in enumerate(deltas, start=1):
            ends = position == len(deltas)
            events.append(_event(chunk(delta), segment.delay, segment_index, ends_segment=ends))
        if segment.kind == "tool_call":
            call_index += 1
    events.append(_event(chunk({}, turn.resolved_finish_reason)))
    if include_usage:
        events.append(_event({**chunk(None), "usage": turn.resolved_usage.to_wire()}))
    events.append(SseEvent(b"data: [DONE]\n\n"))
    return events


def completion_body(turn: Turn, header: ReplyHeader) -> dict[str, Any]:
    """The non-streaming reply: every segment joined into one message."""
    content = "".join("".join(s.pieces) for s in turn.segments if s.kind == "content")
    reasoning = "".join("".join(s.pieces) for s in turn.segments if s.kind == "reasoning")
    message: dict[str, Any] = {"role": "assistant", "content": content or None, "refusal": None}
    if reasoning:
        message["reasoning_content"] = reasoning
    if turn.calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
            for c in turn.calls
        ]
    return {
        "id": header.completion_id,
        "object": "chat.completion",
        "created": header.created,
        "model": header.model,
        "system_fingerprint": None,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": turn.resolved_finish_reason}
        ],
        "usage": turn.resolved_usage.to_wire(),
    }


def _deltas(segment: Segment, call_index: int) -> list[dict[str, Any]]:
    if segment.kind == "content":
        return [{"content": piece} for piece in segment.pieces]
    if segment.kind == "reasoning":
        return [{"reasoning_content": piece} for piece in segment.pieces]
    assert segment.call is not None
    # The first delta names the call with empty arguments, as OpenAI sends it; pieces follow.
    header = {
        "index": call_index,
        "id": segment.call.id,
        "type": "function",
        "function": {"name": segment.call.name, "arguments": ""},
    }
    pieces = [{"index": call_index, "function": {"arguments": piece}} for piece in segment.pieces]
    return [{"tool_calls": [delta]} for delta in [header, *pieces]]


def _event(
    body: dict[str, Any], delay: float = 0.0, segment: int | None = None, *, ends_segment: bool = False
) -> SseEvent:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    if not data.isascii() and _has_lone_surrogate(data):
        # UTF-8 cannot carry a lone surrogate: escape it in the JSON, as a provider would.
        data = json.dumps(body, separators=(",", ":"))
    return SseEvent(f"data: {data}\n\n".encode(), delay, segment, ends_segment)


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return True
    return False
