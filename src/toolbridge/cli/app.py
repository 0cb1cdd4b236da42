"""The Typer application. Each command module registers its commands on `app` when imported."""

from __future__ import annotations

from typing import Annotated

import typer

import toolbridge

app = typer.Typer(
    name="toolbridge",
    help="Let any LLM use tools through MCP.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"toolbridge {toolbridge.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", callback=_print_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Let any LLM use tools through MCP."""


# Importing the command modules registers their commands.
from toolbridge.cli import commands as _commands  # noqa: E402, F401
