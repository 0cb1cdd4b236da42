"""Finding tool calls, reasoning and content in a model's text output, incrementally.

    parser = StreamParser()               # format="auto": every format, recognised by its markers
    for delta in stream:
        for event in parser.feed(delta):  # TextDelta, ReasoningDelta, ToolCallStart, ...
            ...
    events = parser.finish()

    parse(text) -> ParseResult(content, reasoning, tool_calls, errors)   # a whole output at once

    StreamParser("qwen3_xml", reasoning_open=True, schemas={"forecast": {...}})
    parser.finish(truncated=True)         # finish reason `length`: a call still open is an error

    call_format("hermes").format_call("calculate", {"expression": "2 + 2"})  # writing a call

Formats (dialects): `hermes` (`<tool_call>{json}</tool_call>`), `fenced` (a ```` ```tool ```` block),
`mistral` (`[TOOL_CALLS]NAME[ARGS]{json}`, or `[TOOL_CALLS]` and a JSON list), `deepseek`
(`<｜tool▁calls▁begin｜>` V3/V3.1 and the DSML markup of V3.2, V4 and V4.1), `kimi` (K2's
`<|tool_calls_section_begin|>` ... `functions.NAME:IDX`, K3's `<|open|>call tool="NAME"<|sep|>`),
`qwen3_xml` (`<tool_call><function=NAME><parameter=KEY>value</parameter>...`), `glm`
(`<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...`; the `<tool_call>` body decides
between hermes, qwen3_xml and glm), `harmony` (gpt-oss's `<|channel|>commentary to=functions.NAME`
messages, `analysis` as reasoning), `llama3_json` (`{"name": ..., "parameters": {...}}`, bare or after
`<|python_tag|>`), `llama_pythonic` (`[f(a=1), g(b="x")]`), `gemma`
(`<|tool_call>call:NAME{key:<|"|>text<|"|>}<tool_call|>`);
each one both writes and reads its calls. The parser is pure (no I/O), looks at each character a bounded
number of times, and gives the same result however the output is split into chunks. `decode_arguments`
is the one JSON-repair rule for call arguments. This package imports nothing of toolbridge but `types`.
"""

from toolbridge.parsing._calls import CallProblem, decode_arguments
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
from toolbridge.parsing._format import CallFormat
from toolbridge.parsing._python_block import PythonBlockFormat
from toolbridge.parsing._registry import available_formats, call_format, dialect_names, reading_format
from toolbridge.parsing._stream import StreamParser, parse

__all__ = [
    "CallFormat",
    "CallProblem",
    "Event",
    "ParseError",
    "ParseResult",
    "ParsedToolCall",
    "PythonBlockFormat",
    "ReasoningDelta",
    "StreamParser",
    "TextDelta",
    "ToolCallArgumentsDelta",
    "ToolCallEnd",
    "ToolCallStart",
    "available_formats",
    "call_format",
    "decode_arguments",
    "dialect_names",
    "parse",
    "reading_format",
]
