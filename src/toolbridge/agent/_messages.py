"""How the neutral transcript is shown to a model in each tool mode.

The transcript always keeps the neutral shape (assistant messages with `tool_calls`, one `ToolMessage`
per result). Native mode sends it as it is; the adapter maps it to the API's tool roles. Prompt mode
rewrites it per request, since the endpoint knows nothing of tools: calls become `<tool_call>` text in
the assistant message, and the results that follow become `<tool_result>` blocks in one user message.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from toolbridge.prompting import format_tool_call
from toolbridge.types import AssistantMessage, Message, SystemMessage, ToolMessage, ToolResult, UserMessage

__all__ = ["for_prompt_mode", "invalid_call_feedback", "tool_result_block", "without_system"]

_RESULT_CLOSE = "</tool_result>"


def tool_result_block(name: str, result: ToolResult) -> str:
    text = result.text
    if result.is_error and not text.lower().startswith("error"):
        text = f"Error: {text}"
    # A result must not be able to end its own block early.
    text = text.replace(_RESULT_CLOSE, "&lt;/tool_result>")
    return f'<tool_result name="{escape(name)}" id="{escape(result.call_id)}">{text}{_RESULT_CLOSE}'


def invalid_call_feedback(problems: Sequence[tuple[str, str]]) -> str:
    """A tool-result-style message telling the model which of its calls could not be read, and why.

    `problems` holds (message, raw text of the call) pairs.
    """
    blocks = []
    for message, raw in problems:
        blocks.append(
            f'<tool_result name="" error="true">Your tool call could not be parsed, so it did not run. '
            f"{message}\nYou wrote: {raw.replace(_RESULT_CLOSE, '&lt;/tool_result>')}\n"
            'Write each call as <tool_call>{"name": "tool_name", "arguments": {...}}</tool_call> '
            f"with valid JSON.{_RESULT_CLOSE}"
        )
    return "\n".join(blocks)


def for_prompt_mode(messages: Sequence[Message]) -> list[Message]:
    """The transcript as an endpoint without function calling can take it."""
    rendered: list[Message] = []
    results: list[str] = []

    def flush(then: str | None = None) -> None:
        parts = [*results, then] if then is not None else results
        if parts:
            rendered.append(UserMessage(content="\n".join(parts)))
        results.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            results.append(tool_result_block(message.name, message.result))
        elif isinstance(message, UserMessage):
            # Results and the user message after them (an invalid-call notice, a new prompt) go as one.
            flush(message.content)
        else:
            flush()
            if isinstance(message, AssistantMessage) and message.tool_calls:
                calls = "\n".join(format_tool_call(c.name, c.arguments) for c in message.tool_calls)
                content = f"{message.content.rstrip()}\n{calls}" if message.content.strip() else calls
                message = AssistantMessage(content=content, reasoning=message.reasoning)
            rendered.append(message)
    flush()
    return rendered


def without_system(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if not isinstance(m, SystemMessage)]
