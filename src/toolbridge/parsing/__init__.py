"""Finding tool calls, reasoning and content in a model's text output, incrementally.

    parser = StreamParser()               # format="auto": every format, recognised by its markers
    for delta in stream:
        for event in parser.feed(delta):  # TextDelta, ReasoningDelta, ToolCallStart, ...
            ...
    events = parser.finish()

    parse(text) -> ParseResult(content, reasoning, tool_calls, errors)   # a whole output at once

Formats: `hermes` (`<tool_call>{json}</tool_call>`) and `fenced` (a ```` ```tool ```` block). The parser
is pure (no I/O), looks at each character a bounded number of times, and gives the same result however
the output is split into chunks.
"""

from toolbridge.parsing._events import (
    Event,
    ParsedToolCall,
    ParseError,
    ParseResult,
    ReasoningDelta,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallEnd,
    ToolCallStart,
)
from toolbridge.parsing._registry import available_formats
from toolbridge.parsing._stream import StreamParser, parse

__all__ = [
    "Event",
    "ParseError",
    "ParseResult",
    "ParsedToolCall",
    "ReasoningDelta",
    "StreamParser",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "available_formats",
    "parse",
]
