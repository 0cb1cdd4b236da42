"""`toolbridge call`: run one tool by hand and print its result."""

from __future__ import annotations

import json as jsonlib
from typing import Annotated, Any

import typer

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    fail,
    load,
    print_json,
    run,
    setup_logging,
    stderr,
    stdout,
)
from toolbridge.cli.app import app
from toolbridge.types import ToolResult


@app.command()
def call(
    tool: Annotated[str, typer.Argument(help="Tool name, as `toolbridge tools` shows it.")],
    arguments: Annotated[str, typer.Argument(help="Arguments as a JSON object, e.g. '{\"a\": 1}'.")] = "{}",
    server: Annotated[str | None, typer.Option("--server", "-s", help="Run it on this server.")] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", "-t", help="Seconds before giving up.")
    ] = None,
    config: ConfigOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Call TOOL with ARGUMENTS and print the result. Exits 1 if the call failed."""
    setup_logging(verbose)
    parsed = parse_arguments(arguments)
    loaded = load(config)

    from toolbridge.tools import Toolbox  # the MCP SDK: imported when a command needs it

    async def main() -> ToolResult:
        async with Toolbox(loaded) as toolbox:
            return await toolbox.call(tool, parsed, source=server, timeout=timeout)

    result = run(main)
    if json:
        print_json(result.model_dump(mode="json"))
    elif result.is_error:
        stderr.print(result.text)
    else:
        stdout.out(result.text, highlight=False)
    if result.is_error:
        raise typer.Exit(1)


def parse_arguments(text: str) -> dict[str, Any]:
    try:
        value = jsonlib.loads(text)
    except jsonlib.JSONDecodeError as exc:
        fail(
            f"ARGUMENTS is not valid JSON ({exc.msg} at column {exc.colno}). Pass an object like '{{\"a\": 1}}'."
        )
    if not isinstance(value, dict):
        fail(
            f"ARGUMENTS must be a JSON object, got {type(value).__name__}. Pass an object like '{{\"a\": 1}}'."
        )
    return value
