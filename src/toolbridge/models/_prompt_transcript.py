"""The neutral transcript as an endpoint without function calling takes it, each part rendered once.

Calls become the dialect's text in their assistant message; the results after them become
`<tool_result>` blocks in one user message (with the user message that follows them, if any). Every
request carries the whole transcript again, so the parts rendered for the previous request are reused
as the same objects: the adapters' per-message wire cache then keeps a step's cost flat in prompt mode
too, however long the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from toolbridge.parsing import CallFormat
from toolbridge.types import AssistantMessage, Message, ToolMessage, ToolResult, UserMessage

__all__ = ["RESULT_CLOSE", "PromptTranscript", "inside_result_block", "tool_result_block"]

RESULT_CLOSE = "</tool_result>"

_Rendered = dict[tuple[int, ...], tuple[tuple[Message, ...], Message]]


def tool_result_block(name: str, result: ToolResult) -> str:
    text = result.text
    if result.is_error and not text.lower().startswith("error"):
        text = f"Error: {text}"
    body = inside_result_block(text)
    return f'<tool_result name="{escape(name)}" id="{escape(result.call_id)}">{body}{RESULT_CLOSE}'


def inside_result_block(text: str) -> str:
    """`text`, made unable to end the result block it is put in early."""
    return text.replace(RESULT_CLOSE, "&lt;/tool_result>")


class PromptTranscript:
    """Renders transcripts for one prompt-mode model, remembering the parts of the latest one."""

    def __init__(self, dialect: CallFormat) -> None:
        self._dialect = dialect
        # Keyed by the identities of the source messages; holding them keeps those identities unique.
        self._previous: _Rendered = {}

    def render(self, messages: Sequence[Message]) -> list[Message]:
        rendered: list[Message] = []
        kept: _Rendered = {}
        results: list[Message] = []

        def add(sources: tuple[Message, ...], make: Callable[[], Message]) -> None:
            key = tuple(map(id, sources))
            known = self._previous.get(key)
            message = known[1] if known is not None else make()
            kept[key] = (sources, message)
            rendered.append(message)

        def flush(then: UserMessage | None = None) -> None:
            sources = (*results, then) if then is not None else tuple(results)
            if sources:
                attachments = then.attachments if then is not None else []
                add(
                    sources,
                    lambda: UserMessage(
                        content="\n".join(map(self._user_text, sources)), attachments=attachments
                    ),
                )
            results.clear()

        for message in messages:
            if isinstance(message, ToolMessage):
                results.append(message)
            elif isinstance(message, UserMessage) and results:
                flush(message)
            elif isinstance(message, AssistantMessage) and message.tool_calls:
                flush()
                add((message,), lambda: self._assistant(message))  # noqa: B023 - called at once
            else:
                flush()
                rendered.append(message)
        flush()
        self._previous = kept
        return rendered

    def _assistant(self, message: AssistantMessage) -> AssistantMessage:
        calls = "\n".join(self._dialect.format_call(call.name, call.arguments) for call in message.tool_calls)
        content = f"{message.content.rstrip()}\n{calls}" if message.content.strip() else calls
        return AssistantMessage(content=content, reasoning=message.reasoning)

    @staticmethod
    def _user_text(message: Message) -> str:
        if isinstance(message, ToolMessage):
            return tool_result_block(message.name, message.result)
        assert isinstance(message, UserMessage)
        return message.content
