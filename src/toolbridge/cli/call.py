"""`toolbridge call`: run one tool by hand and print its result, through the call pipeline as the
`default` agent's model would (its tool rules and approval policy; the terminal is asked). The call is
logged for `stats` with `caller: "cli"`, also when Ctrl-C cancels it."""

from __future__ import annotations

import json as jsonlib
from contextlib import nullcontext
from typing import TYPE_CHECKING, Annotated, Any

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
    start_tracing,
    stderr,
    stdout,
)
from toolbridge.cli._store import DbOption, open_history
from toolbridge.cli.app import app
from toolbridge.types import NATIVE_SOURCE, ToolCall, ToolResult, qualified_name, split_qualified

if TYPE_CHECKING:
    from toolbridge.mcp import ProgressHandler, ToolProgress


@app.command()
def call(
    tool: Annotated[str, typer.Argument(help="Tool name, as `toolbridge tools` shows it.")],
    arguments: Annotated[str, typer.Argument(help="Arguments as a JSON object, e.g. '{\"a\": 1}'.")] = "{}",
    server: Annotated[str | None, typer.Option("--server", help="Run it on this server.")] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", "-t", help="Seconds before giving up.")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Approve the call (and servers' sampling) without asking.")
    ] = False,
    config: ConfigOption = None,
    db: DbOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Call TOOL with ARGUMENTS and print the result. Exits 1 if the call failed.

    A call the `default` agent's approval rules hold back is asked about on the terminal (--yes approves
    it; with no terminal it is refused)."""
    setup_logging(verbose)
    parsed = parse_arguments(arguments)
    loaded = load(config)
    start_tracing(loaded, command="toolbridge call")
    store = open_history(db, config)

    from toolbridge.cli._asks import TerminalAnswers  # the MCP SDK: imported when needed
    from toolbridge.store import CallLog, find_agent
    from toolbridge.tools import CallContext, Toolbox

    default = find_agent(loaded, store, None).definition
    request = routed_call(tool, parsed, server)

    async def main() -> ToolResult:
        answers = TerminalAnswers(loaded, approve_everything=yes, json_output=json)
        context = CallContext(
            caller="cli",
            timeout=timeout,
            on_progress=None if json else _report_progress(tool, server),
            allows=default.why_not_offered,
            approval=default.approval,
            approve=answers.approver(),
        )
        async with Toolbox(loaded, features=answers.requests.features()) as toolbox:
            # Ctrl-C cancels the call: the pipeline logs it as cancelled before `main` ends.
            if store is not None:
                toolbox.observers.append(CallLog(store.log_tool_calls))
            try:
                outcome = await toolbox.calls.call(request, context)
                return outcome.result
            finally:
                await answers.aclose()

    with store or nullcontext():
        result = run(main)
    if json:
        print_json(result.model_dump(mode="json"))
    elif result.is_error:
        stderr.print(result.text)
    else:
        stdout.out(result.text, highlight=False)
    if result.is_error:
        raise typer.Exit(1)


def _report_progress(tool: str, server: str | None) -> ProgressHandler:
    """Progress the server reports, on stderr: `… excel.read_range 40% reading sheet 2`."""
    where = f"{server}.{tool}" if server else tool

    async def report(progress: ToolProgress) -> None:
        stderr.print(f"… {where} {progress.describe()}", markup=False, highlight=False)

    return report


def routed_call(tool: str, arguments: dict[str, Any], server: str | None) -> ToolCall:
    """The call `--server` means: that server's tool and no other. The tool's name may be qualified as
    `toolbridge tools` shows it (`time__get_current_time --server time`); `--server native` names the
    tools built into toolbridge (the registry takes a bare "native" source to mean "wherever it is")."""
    split = split_qualified(tool)
    if server and split is not None:
        prefix, bare = split
        if prefix != server:
            fail(f"{tool!r} names server {prefix!r}, but --server says {server!r}. Drop one of them.")
        tool = bare
    if server == NATIVE_SOURCE:
        return ToolCall(name=qualified_name(NATIVE_SOURCE, tool), arguments=arguments)
    return ToolCall(name=tool, arguments=arguments, source=server)


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
