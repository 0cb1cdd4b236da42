"""`toolbridge ask`: one question, answered through as many tool calls as it takes."""

from __future__ import annotations

import io
import os
import stat
import sys
from typing import Annotated

import typer

from toolbridge.cli._agent_options import (
    AgentOption,
    AttachmentOption,
    ContinueOption,
    LogOption,
    ModelOption,
    ModelOptionsOption,
    PairedOptions,
    SystemOption,
    YesOption,
    keeps_chat,
    model_options,
    read_attachments,
)
from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    fail,
    interrupted,
    load,
    setup_logging,
    start_tracing,
    stderr,
    stdout,
    warn_unavailable,
)
from toolbridge.cli._render import EventPrinter, JsonEventPrinter, TerminalRenderer
from toolbridge.cli._store import DbOption, chat_to_continue, open_history, open_store
from toolbridge.cli.app import app
from toolbridge.errors import ToolbridgeError


def make_printer(json: bool) -> EventPrinter:
    return JsonEventPrinter(stdout, stderr) if json else TerminalRenderer(stdout)


@app.command(cls=PairedOptions)
def ask(
    question: Annotated[
        str | None,
        typer.Argument(help="What to ask. '-' or none: read it from stdin (echo q | toolbridge ask)."),
    ] = None,
    continue_: ContinueOption = False,
    agent: AgentOption = None,
    model: ModelOption = None,
    option: ModelOptionsOption = None,
    attachment: AttachmentOption = None,
    system: SystemOption = None,
    yes: YesOption = False,
    log: LogOption = None,
    config: ConfigOption = None,
    db: DbOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Ask once and print the answer; tool calls are shown as they run. `--json` prints the events.

    The question and its answer are kept as a chat (`toolbridge history`) when the store is installed,
    unless `-n/--no-log` or `toolbridge history off` says not to; `-c` asks in the last chat, with what
    was said before; `-a FILE` sends a file with the question."""
    setup_logging(verbose)
    keep = keeps_chat(log, continuing="-c" if continue_ else None)
    settings = model_options(option)
    attachments = read_attachments(attachment)
    prompt = read_question(question)
    loaded = load(config)
    start_tracing(loaded, command="toolbridge ask")
    # Without the store a chat is kept nowhere; continuing one needs it.
    store = open_store(db, config) if continue_ else open_history(db, config)
    from toolbridge.cli._session import TerminalSession  # the agent stack: only when asking

    try:
        continued, agent, model = (
            chat_to_continue(store, None, agent, model, or_new=True)
            if continue_ and store is not None
            else (None, agent, model)
        )
        with TerminalSession(
            loaded,
            make_printer(json),
            agent=agent,
            model=model,
            approve_everything=yes,
            store=store,
            chat_id=continued,
            instructions=system,
            model_settings=settings,
            keep_chat=keep,
        ) as session:
            warn_unavailable(session.connect_servers())
            result = session.turn(prompt, attachments=attachments)
    except ToolbridgeError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        interrupted()
    if result is None or result.stop_reason == "cancelled":
        raise typer.Exit(130)
    if result.stop_reason != "final_answer":
        raise typer.Exit(1)


def read_question(question: str | None) -> str:
    """The question as given; read from stdin for '-' or when none is given and stdin is piped. Piped
    text with a question is put before it, as `llm` does: `cat notes.txt | toolbridge ask "Summarize"`."""
    if question is not None and question != "-":
        piped = _piped_stdin()
        return f"{piped}\n\n{question}" if piped else question
    if question is None and sys.stdin.isatty():
        fail('give a question: toolbridge ask "What is 15 + 27?" (or pipe one in: echo ... | toolbridge ask)')
    text = sys.stdin.read().strip()
    if not text:
        fail('stdin held no question. Pass one: toolbridge ask "What is 15 + 27?"')
    return text


def _piped_stdin() -> str:
    """What a pipe or a file on stdin holds; nothing for a terminal, /dev/null or a socket (a service
    manager's), which are never read, so a question given alone never waits on them."""
    if sys.stdin is None or sys.stdin.isatty():
        return ""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, io.UnsupportedOperation):
        return sys.stdin.read().strip()  # a stream in memory (a test's, a program's)
    if not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode)):
        return ""
    return sys.stdin.read().strip()
