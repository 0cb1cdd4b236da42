"""`toolbridge prompts`: the servers' prompts with their arguments."""

from __future__ import annotations

import typer
from rich.markup import escape

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    ServerOption,
    VerboseOption,
    check_server,
    load,
    print_json,
    run,
    setup_logging,
    stdout,
    warn,
)
from toolbridge.cli.app import app


@app.command()
def prompts(
    server: ServerOption = None,
    config: ConfigOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """List the prompts of every server (or one), with their arguments. In chat: /prompt NAME key=value."""
    setup_logging(verbose)
    loaded = load(config)
    check_server(loaded, server)
    from toolbridge.mcp import PromptInfo
    from toolbridge.tools import Toolbox

    async def main() -> tuple[list[PromptInfo], dict[str, str]]:
        async with Toolbox(loaded) as toolbox:
            listed = await toolbox.content.prompts(server)
        return listed.items, listed.errors

    found, errors = run(main)
    for name, error in errors.items():
        warn(f"server {name!r} could not list its prompts: {error}")
    if json:
        print_json([prompt.model_dump(mode="json") for prompt in found])
    else:
        for prompt in found:
            stdout.print(f"[dim]{escape(prompt.server)}[/]  [bold]{escape(prompt.name)}[/]  "
                         f"{escape(prompt.description or prompt.title or '')}")  # fmt: skip
            for argument in prompt.arguments:
                need = "required" if argument.required else "optional"
                stdout.print(
                    f"    {escape(argument.name)} [dim]({need})[/]  {escape(argument.description or '')}"
                )
        if not found:
            stdout.print("No prompts.")
    if errors:
        raise typer.Exit(1)
