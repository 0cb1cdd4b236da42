"""The Typer application. Each command module registers its commands on `app` when imported."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="toolbridge",
    help="Let any LLM use tools through MCP.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Importing the command modules registers their commands.
from toolbridge.cli import commands as _commands  # noqa: E402, F401
