"""The formats the parser knows, by name. Adding a format is one more entry here."""

from __future__ import annotations

from toolbridge.errors import UsageError
from toolbridge.parsing._deepseek import DeepSeekFormat
from toolbridge.parsing._fenced import FencedFormat
from toolbridge.parsing._format import CallFormat
from toolbridge.parsing._gemma import GemmaFormat
from toolbridge.parsing._glm import GlmFormat
from toolbridge.parsing._harmony import HarmonyFormat
from toolbridge.parsing._hermes import HermesFormat
from toolbridge.parsing._kimi import KimiFormat
from toolbridge.parsing._llama_json import Llama3JsonFormat
from toolbridge.parsing._llama_pythonic import LlamaPythonicFormat
from toolbridge.parsing._mistral import MistralFormat
from toolbridge.parsing._python_block import PythonBlockFormat
from toolbridge.parsing._qwen3_xml import Qwen3XmlFormat

__all__ = [
    "AUTO",
    "FORMATS",
    "available_formats",
    "call_format",
    "dialect_names",
    "reading_format",
    "resolve_formats",
]

AUTO = "auto"
FORMATS: dict[str, CallFormat] = {
    fmt.name: fmt
    for fmt in (
        HermesFormat(),
        FencedFormat(),
        MistralFormat(),
        DeepSeekFormat(),
        KimiFormat(),
        Qwen3XmlFormat(),
        GlmFormat(),
        HarmonyFormat(),
        Llama3JsonFormat(),
        LlamaPythonicFormat(),
        GemmaFormat(),
    )
}


TOOLBRIDGE_FORMATS: dict[str, CallFormat] = {fmt.name: fmt for fmt in (PythonBlockFormat(),)}
"""Formats toolbridge itself asks a model for in a mode of its own (code mode's ```python block): read
by name, never in `auto` nor as a model's dialect, since they also begin ordinary answers."""


def available_formats() -> list[str]:
    """`auto` (every format, recognised by its markers), then each format's name."""
    return [AUTO, *FORMATS]


def dialect_names() -> list[str]:
    """The formats a model can write in (every one but `auto`)."""
    return list(FORMATS)


def reading_format(dialect: str) -> str:
    """The parser format for output in `dialect`: `auto` when it covers the dialect (then calls a model
    writes in another dialect are read too), else the dialect alone: also when some of its calls have
    markers `auto` does not look for (a bare `{` of `llama3_json`, a bare `[` of `llama_pythonic`)."""
    fmt = call_format(dialect)
    return AUTO if fmt in resolve_formats(AUTO) and not fmt.named_markers else dialect


def resolve_formats(name: str) -> tuple[CallFormat, ...]:
    if name == AUTO:
        return tuple(FORMATS.values())
    return (call_format(name),)


def call_format(name: str) -> CallFormat:
    """The format (dialect) named `name` (see `available_formats()`)."""
    try:
        return FORMATS[name] if name in FORMATS else TOOLBRIDGE_FORMATS[name]
    except KeyError:
        raise UsageError(
            f"unknown tool-call format {name!r}; choose one of: {', '.join(available_formats())}"
        ) from None
