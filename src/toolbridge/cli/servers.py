"""`toolbridge servers`: every configured MCP server with its state."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.text import Text

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

if TYPE_CHECKING:
    from toolbridge.config import Config
    from toolbridge.mcp.server_log import LogEntry
    from toolbridge.tools import ServerStatus


LogsOption = Annotated[
    str | None,
    typer.Option("--logs", metavar="SERVER", help="Connect SERVER and show the last messages it logged."),
]


@app.command()
def servers(
    config: ConfigOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
    logs: LogsOption = None,
) -> None:
    """Connect to every configured MCP server; show its transport, MCP revision, state, tool count, last
    error.

    Exits 1 when a server failed to start."""
    setup_logging(verbose)
    loaded = load(config)
    if logs is not None:
        _show_logs(loaded, logs, json)
        return

    from toolbridge.tools import Toolbox  # the MCP SDK: imported when a command needs it

    async def main() -> list[ServerStatus]:
        async with Toolbox(loaded) as toolbox:
            return await toolbox.server_status()

    statuses = run(main)
    _show(statuses, loaded, json)
    failed = [status.name for status in statuses if status.state == "failed"]
    if failed:
        stderr.print(
            f"{len(failed)} of {len(statuses)} servers failed to start: {', '.join(failed)}.", markup=False
        )
        raise typer.Exit(1)


def _show_logs(loaded: Config, server: str, json: bool) -> None:
    from toolbridge.errors import ServerError
    from toolbridge.tools import Toolbox

    async def main() -> tuple[list[LogEntry], str]:
        async with Toolbox(loaded) as toolbox:
            entries = await toolbox.server_logs(server)
            return entries, toolbox.pool.connection(server).stderr_tail()

    try:
        entries, stderr_tail = run(main)
    except ServerError as exc:
        fail(str(exc))
    if json:
        print_json([asdict(entry) for entry in entries])
        return
    for entry in entries:
        stdout.print(entry.describe(), markup=False, highlight=False)
    if not entries:
        stdout.print(f"Server {server!r} has logged no messages to toolbridge.", markup=False)
    if stderr_tail:
        stdout.print(f"Last lines of its stderr:\n{stderr_tail}", markup=False, highlight=False)


def _show(statuses: list[ServerStatus], loaded: Config, json: bool) -> None:
    if json:
        print_json([status.model_dump() for status in statuses])
        return
    if not statuses:
        where = loaded.path or "no config file found"
        stdout.print(f"No MCP servers configured ({where}). Add an 'mcpServers' section to toolbridge.json.")
        return
    # One block per server rather than a table: a command line and an error are long, and a table's
    # seven columns at 80 columns wrap them a word per line.
    for status in statuses:
        style = {"connected": "green", "failed": "red"}.get(status.state, "yellow")
        facts = [f"[{style}]{status.state}[/]", status.transport]
        if status.tool_count is not None:
            facts.append(f"{status.tool_count} tool{'' if status.tool_count == 1 else 's'}")
        if status.protocol:
            facts.append(f"MCP {escape(status.protocol)}")
        stdout.print(f"[bold]{escape(status.name)}[/]  " + "  ".join(facts))
        stdout.print(f"  {status.target}", markup=False)
        if status.last_error:
            stdout.print(Text(f"  last error: {status.last_error}", style="red"))
