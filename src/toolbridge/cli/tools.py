"""`toolbridge tools`: the full definition of every tool an agent can see."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    check_server,
    load,
    print_json,
    run,
    setup_logging,
    stdout,
    warn_unavailable,
)
from toolbridge.cli.app import app
from toolbridge.prompting import render_tool as render_tool_definition
from toolbridge.types import ToolSpec

ToolsServerOption = Annotated[
    str | None, typer.Option("--server", help="Only this server's tools ('native' for built-ins).")
]


@app.command()
def tools(
    server: ToolsServerOption = None,
    config: ConfigOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """List every tool with its description and parameters (MCP servers first, then native tools)."""
    setup_logging(verbose)
    loaded = load(config)
    check_server(loaded, server, also=["native"])

    from toolbridge.tools import Toolbox  # the MCP SDK: imported when a command needs it

    async def main() -> tuple[list[ToolSpec], dict[str, str]]:
        async with Toolbox(loaded) as toolbox:
            specs = await toolbox.list_tools(server=server)
            return specs, toolbox.registry.server_errors

    specs, errors = run(main)
    warn_unavailable({name: error for name, error in errors.items() if server in (None, name)})
    if json:
        print_json([spec.model_dump(mode="json") for spec in specs])
        return
    for spec in specs:
        stdout.print(render_tool(spec))


def render_tool(spec: ToolSpec) -> str:
    return f"[dim]{escape(spec.source)}[/]\n{escape(render_tool_definition(spec))}\n"
