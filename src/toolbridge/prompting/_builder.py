"""The system prompt: who the agent is, then the tools and how to call them."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from toolbridge.errors import UsageError
from toolbridge.prompting._catalog import render_tool_catalog
from toolbridge.prompting._convention import CallWriter, render_calling_convention
from toolbridge.types import ToolMode, ToolSpec

__all__ = ["Persona", "build_system_prompt"]

logger = logging.getLogger("toolbridge.prompting")

_NATIVE_GUIDANCE = (
    "# Tools\n"
    "You can call the tools you are given when they help with the task. You may call several at once "
    "when they don't depend on each other. Wait for each result before relying on it: never invent, "
    "guess or predict what a tool returns. If no tool is needed, answer directly."
)


@dataclass(frozen=True)
class Persona:
    """Who the agent is: the part of the system prompt its author writes."""

    name: str = ""
    description: str = ""
    instructions: str = ""
    """Instructions and personality, as written."""


def build_system_prompt(
    persona: Persona | None,
    tools: Sequence[ToolSpec],
    *,
    tool_mode: ToolMode = "prompt",
    dialect: CallWriter | None = None,
) -> str:
    """The full system prompt. Without tools it is the persona alone. Logged at debug level.

    Prompt mode needs the `dialect` the model is asked to write its calls in (a call format of
    `toolbridge.parsing`, e.g. `call_format("hermes")`)."""
    sections = _persona_sections(persona or Persona())
    if tools and tool_mode == "prompt":
        if dialect is None:
            raise UsageError("prompt mode needs a dialect to write calls in, e.g. call_format('hermes')")
        sections.append("# Tools\nYou can use these tools:\n\n" + render_tool_catalog(tools))
        sections.append("# Calling tools\n" + render_calling_convention(tools, dialect))
    elif tools and tool_mode == "native":
        sections.append(_NATIVE_GUIDANCE)
    elif tools:
        raise UsageError(f"unknown tool mode {tool_mode!r}: use 'prompt' or 'native'")
    prompt = "\n\n".join(sections)
    logger.debug("system prompt (%s mode, %d tools):\n%s", tool_mode, len(tools), prompt)
    return prompt


def _persona_sections(persona: Persona) -> list[str]:
    sections = []
    name = persona.name.strip()
    description = persona.description.strip()
    if name and description:
        sections.append(f"You are {name}. {description}")
    elif name:
        sections.append(f"You are {name}.")
    elif description:
        sections.append(description)
    if instructions := persona.instructions.strip():
        sections.append(instructions)
    return sections
