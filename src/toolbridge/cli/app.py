"""The Typer application. Each command module registers its commands on `app` when imported; `load_for`
imports only the one a command line names, so `toolbridge ask` pays for no web server, `toolbridge --help`
for every command (`toolbridge.cli.commands` has them all, for programs and tests)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Annotated

import typer

from toolbridge._version import __version__


class StdoutClosed(Exception):
    """Whoever read stdout stopped reading (`toolbridge ask ... | head -1`): the command ends quietly.
    Here rather than with the console that raises it, so the entry point catches it without loading more."""


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
        typer.echo(f"toolbridge {__version__}")
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


COMMANDS: dict[str, str] = {
    "access-keys": "users",
    "agents": "agents",
    "ask": "ask",
    "auth": "auth",
    "call": "call",
    "chat": "chat",
    "gateway": "gateway",
    "history": "history",
    "keys": "users",
    "models": "models",
    "parse": "parse",
    "prompts": "prompts",
    "provider-keys": "provider_keys",
    "read": "resources",
    "resources": "resources",
    "serve": "serve",
    "servers": "servers",
    "stats": "stats",
    "tools": "tools",
    "users": "users",
}
"""Command (or command group) name -> the module under `toolbridge.cli` that registers it."""


def load_for(arguments: Sequence[str]) -> None:
    """Register the command `arguments` name (the first that is not an option): none for `--version`,
    every command when they name none or one that does not exist (help lists them all; a typo gets its
    suggestion)."""
    named = next((argument for argument in arguments if not argument.startswith("-")), None)
    if named in COMMANDS:
        importlib.import_module(f"toolbridge.cli.{COMMANDS[named]}")
    elif named is None and {"--version", "-V"} & set(arguments):
        return  # answered by the callback, before any command
    else:
        load_all()


def load_all() -> None:
    for module in sorted(set(COMMANDS.values())):
        importlib.import_module(f"toolbridge.cli.{module}")
