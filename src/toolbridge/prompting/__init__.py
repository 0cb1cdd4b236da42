"""Telling a model about tools: the catalog in the system prompt, the calling convention, the prompt
builder, and each provider's flavour of the input schemas."""

from toolbridge.prompting._builder import Persona, build_system_prompt
from toolbridge.prompting._catalog import render_tool, render_tool_catalog
from toolbridge.prompting._convention import CallWriter, example_arguments, render_calling_convention
from toolbridge.prompting._schema import (
    SchemaTarget,
    openai_strict_problems,
    openai_tool_definitions,
    transform_schema,
)

__all__ = [
    "CallWriter",
    "Persona",
    "SchemaTarget",
    "build_system_prompt",
    "example_arguments",
    "openai_strict_problems",
    "openai_tool_definitions",
    "render_calling_convention",
    "render_tool",
    "render_tool_catalog",
    "transform_schema",
]
