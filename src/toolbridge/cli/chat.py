"""`toolbridge chat`: an interactive conversation with an agent, kept as a chat in the database."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from toolbridge.cli._agent_options import (
    AgentOption,
    LogOption,
    ModelOption,
    ModelOptionsOption,
    PairedOptions,
    SystemOption,
    YesOption,
    keeps_chat,
    model_options,
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
from toolbridge.cli._store import DbOption, chat_to_continue, open_history, open_store
from toolbridge.cli.app import app
from toolbridge.cli.ask import make_printer
from toolbridge.errors import ToolbridgeError

if TYPE_CHECKING:
    from toolbridge.cli._chat_resources_and_prompts import ChatCompleter
    from toolbridge.cli._session import TerminalSession

_EXIT_WORDS = {"exit", "quit"}


@app.command(cls=PairedOptions)
def chat(
    chat_id: Annotated[
        int | None, typer.Argument(help="With --resume: the chat to continue (default: the latest).")
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume", "-r", "--continue", "-c", help="Continue a stored chat (the latest by default)."
        ),
    ] = False,
    agent: AgentOption = None,
    model: ModelOption = None,
    option: ModelOptionsOption = None,
    system: SystemOption = None,
    yes: YesOption = False,
    log: LogOption = None,
    config: ConfigOption = None,
    db: DbOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Chat with an agent. Ctrl-C stops an answer; Ctrl-D or /exit ends the chat; /help lists commands.

    Every message is stored as it completes (not with -n/--no-log or `toolbridge history off`);
    `toolbridge chat --resume [ID]` continues a chat."""
    setup_logging(verbose)
    settings = model_options(option)
    if chat_id is not None and not resume:
        fail(f"to continue chat {chat_id}, write `toolbridge chat --resume {chat_id}`.")
    keep = keeps_chat(log, continuing="--resume" if resume else None)
    if not keep:
        why = "-n/--no-log" if log is False else "history is off; `toolbridge history on` turns it on"
        stderr.print(f"note: this chat is not stored ({why})", markup=False)
    loaded = load(config)
    start_tracing(loaded, command="toolbridge chat")
    # Without the store a chat is kept nowhere; resuming one needs it.
    store = open_store(db, config) if resume else open_history(db, config)
    from toolbridge.cli._session import TerminalSession  # the agent stack: only when chatting

    try:
        resumed, agent, model = (
            chat_to_continue(store, chat_id, agent, model)
            if resume and store is not None
            else (None, agent, model)
        )
        with TerminalSession(
            loaded,
            make_printer(json),
            agent=agent,
            model=model,
            approve_everything=yes,
            store=store,
            chat_id=resumed,
            instructions=system,
            model_settings=settings,
            keep_chat=keep,
        ) as session:
            if not json:
                name = escape(session.agent.definition.name)
                again = (
                    f"Continuing chat {resumed} ({len(session.history)} messages) with"
                    if resumed
                    else "Chatting with"
                )
                stdout.print(f"[dim]{again} {name} ({escape(session.agent.model.name)}). "
                             "Ctrl-C stops an answer, Ctrl-D or /exit quits, /help lists commands.[/]")  # fmt: skip
            warn_unavailable(session.connect_servers())
            _converse(session, json)
            if session.chat_id is not None and keep and not json:
                hint = resume_command(session.chat_id, db=db, config=config)
                stdout.print(f"[dim]Saved as chat {session.chat_id}: {escape(hint)}[/]")
    except ToolbridgeError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        interrupted()


def resume_command(chat_id: int, *, db: str | None, config: Path | None) -> str:
    """The command that continues this chat, with the --db and --config it was started with."""
    words = ["toolbridge", "chat", "--resume", str(chat_id)]
    if db:
        words += ["--db", db]
    if config:
        words += ["--config", str(config)]
    return shlex.join(words)


def _complete_with(completer: ChatCompleter) -> None:
    """Tab completion where the terminal has readline; words are split at spaces only (`@s:uri` is one)."""
    if not sys.stdin.isatty():
        return
    try:
        import readline
    except ImportError:  # pragma: no cover - e.g. Windows without pyreadline
        return
    readline.set_completer_delims(" \t\n")
    readline.set_completer(completer.complete)
    readline.parse_and_bind("tab: complete")


def _converse(session: TerminalSession, json: bool) -> None:
    from toolbridge.cli._chat_commands import COMMANDS, EXIT, is_chat_command, run_chat_command
    from toolbridge.cli._chat_resources_and_prompts import ChatCompleter, send_message

    _complete_with(ChatCompleter(session, COMMANDS))
    while True:
        try:
            line = stdout.input("[bold]you>[/] " if not json else "")
        except (EOFError, KeyboardInterrupt):
            return
        if line.strip().lower() in _EXIT_WORDS:
            return
        if is_chat_command(line):
            if run_chat_command(session, line) == EXIT:
                return
        elif line.strip():
            send_message(session, line, quiet=json)  # with the resources it names (@server:uri) attached
