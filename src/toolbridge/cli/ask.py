"""`toolbridge ask`: one question, answered through as many tool calls as it takes."""

from __future__ import annotations

from typing import Annotated

import typer

from toolbridge.cli._agent_options import AgentOption, ModelOption, YesOption
from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    fail,
    load,
    setup_logging,
    stderr,
    stdout,
)
from toolbridge.cli._render import EventPrinter, JsonEventPrinter, TerminalRenderer
from toolbridge.cli._store import DbOption, open_store
from toolbridge.cli.app import app
from toolbridge.errors import ToolbridgeError


def make_printer(json: bool) -> EventPrinter:
    return JsonEventPrinter(stdout, stderr) if json else TerminalRenderer(stdout)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="What to ask.")],
    agent: AgentOption = None,
    model: ModelOption = None,
    yes: YesOption = False,
    config: ConfigOption = None,
    db: DbOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Ask once and print the answer; tool calls are shown as they run. `--json` prints the events.

    The question and its answer are kept as a chat (`toolbridge history`)."""
    setup_logging(verbose)
    loaded = load(config)
    store = open_store(db, config)
    from toolbridge.cli._session import TerminalSession  # the agent stack: only when asking

    try:
        with TerminalSession(
            loaded, make_printer(json), agent=agent, model=model, approve_everything=yes, store=store
        ) as session:
            result = session.turn(question)
    except ToolbridgeError as exc:
        fail(str(exc))
    if result is None or result.stop_reason == "cancelled":
        raise typer.Exit(130)
    if result.stop_reason != "final_answer":
        raise typer.Exit(1)
