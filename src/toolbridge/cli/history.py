"""`toolbridge history`: stored chats, newest first; `toolbridge history show ID`: one chat's messages."""

from __future__ import annotations

import json as json_module
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    errors_reported,
    print_json,
    setup_logging,
    stderr,
    stdout,
)
from toolbridge.cli._store import DbOption, open_store, when
from toolbridge.cli.app import app

if TYPE_CHECKING:
    from toolbridge.runs.ledger import RunRecord
    from toolbridge.store import StoredMessage
from toolbridge.types import AssistantMessage, ToolMessage

history_app = typer.Typer(no_args_is_help=False, help="Stored chats and their messages.")
app.add_typer(history_app, name="history")

LimitOption = Annotated[int, typer.Option("--limit", "-n", min=1, help="Show at most this many chats.")]


@history_app.callback(invoke_without_command=True)
def history(
    ctx: typer.Context,
    limit: LimitOption = 20,
    search: Annotated[
        str | None,
        typer.Option(
            "--search", "-q", help="Only chats whose title or messages hold this text.", show_default=False
        ),
    ] = None,
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """List stored chats, most recently updated first: id, title, agent, the model that answered last,
    messages, last update."""
    setup_logging(verbose)
    if ctx.invoked_subcommand is not None:
        return
    with open_store(db, config) as store:
        chats = store.list_chats(limit=limit, containing=search)
    if json:
        print_json([chat.model_dump(mode="json") for chat in chats])
        return
    if not chats:
        found = f"No chat holds {search!r}" if search else "No chats stored yet"
        stdout.print(f"{escape(found)} in {store.safe_url}.")
        return
    table = Table("id", "title", "agent", "model", "messages", "updated")
    for chat in chats:
        table.add_row(
            str(chat.id),
            escape(chat.title),
            escape(chat.agent or ""),
            escape(chat.answered_by or chat.model or ""),
            str(chat.message_count),
            when(chat.updated_at),
        )
    stdout.print(table)


@history_app.command("show")
def show(
    chat_id: Annotated[int, typer.Argument(metavar="ID", help="The chat's id, from `toolbridge history`.")],
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Print a chat's messages in order: user, assistant (with reasoning and tool calls), tool results."""
    setup_logging(verbose)
    with open_store(db, config) as store, errors_reported():
        from toolbridge.runs.ledger import RunLedger  # the database's: imported with it, not for --help

        chat = store.get_chat(chat_id)
        messages = store.get_stored_messages(chat_id)
        runs = RunLedger.of(store).of_chat(chat_id)
    if json:
        print_json(
            {
                **chat.model_dump(mode="json"),
                "messages": [_message_json(stored) for stored in messages],
                "runs": [_run_json(run) for run in runs],
            }
        )
        return
    stdout.print(
        f"[bold]{escape(chat.title) or '(untitled)'}[/]  chat {chat.id}, agent {escape(chat.agent or '-')}"
    )
    # A run that did not complete is noted after the last message it stored, where it stopped.
    unfinished = [run for run in runs if run.status not in ("running", "completed") and run.ended_at]
    for stored in messages:
        while unfinished and unfinished[0].ended_at and unfinished[0].ended_at < stored.created_at:
            print_run_end(unfinished.pop(0))
        print_message(stored)
    for run in unfinished:
        print_run_end(run)


@history_app.command("delete")
def delete(
    chat_ids: Annotated[
        list[int], typer.Argument(metavar="ID...", help="The chats' ids, from `toolbridge history`.")
    ],
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Delete chats and their messages (the tool-call log of `toolbridge stats` keeps its entries)."""
    setup_logging(verbose)
    with open_store(db, config) as store, errors_reported():
        for chat_id in chat_ids:
            store.delete_chat(chat_id)
            stderr.print(f"Deleted chat {chat_id}.")


def _run_json(run: RunRecord) -> dict[str, Any]:
    return {
        "id": run.id,
        "status": run.status,
        "started_at": run.started_at.isoformat(),
        "ended_at": run.ended_at.isoformat() if run.ended_at else None,
    }


_RUN_ENDS = {
    "cancelled": "cancelled: the run was stopped",
    "failed": "failed: see the server's log",
}


def print_run_end(run: RunRecord) -> None:
    from toolbridge.runs.ledger import INTERRUPTED_MESSAGE  # the database's: imported with it, not for --help

    ends = {"interrupted": INTERRUPTED_MESSAGE, **_RUN_ENDS}
    ended = when(run.ended_at) if run.ended_at else ""
    stdout.print(f"\n[bold yellow]run {ends.get(run.status, run.status)}[/] [dim]{ended}[/]")


def _message_json(stored: StoredMessage) -> dict[str, Any]:
    # The neutral message's own fields, flat, plus where and when it was stored.
    return {
        "position": stored.position,
        "created_at": stored.created_at.isoformat(),
        **stored.message.model_dump(mode="json"),
        **({"model": stored.model} if stored.model else {}),
    }


def print_message(stored: StoredMessage) -> None:
    message = stored.message
    by = f" [dim]({escape(stored.model)})[/]" if stored.model else ""
    stdout.print(f"\n[bold cyan]{message.role}[/]{by} [dim]{when(stored.created_at)}[/]")
    if isinstance(message, AssistantMessage):
        if message.reasoning:
            stdout.print(f"[dim italic]{escape(message.reasoning)}[/]")
        if message.content:
            stdout.print(escape(message.content))
        for call in message.tool_calls:
            stdout.print(f"[yellow]→ {escape(call.name)}[/]({escape(_arguments(call.arguments))})")
    elif isinstance(message, ToolMessage):
        result = message.result
        state = "[red]error[/]" if result.is_error else "[green]ok[/]"
        where = f" on {escape(result.server)}" if result.server else ""
        stdout.print(f"[yellow]{escape(message.name)}[/]{where} {state} {result.duration:.2f}s")
        stdout.print(escape(result.text))
    else:
        stdout.print(escape(message.content))


def _arguments(arguments: dict[str, Any]) -> str:
    return json_module.dumps(arguments, ensure_ascii=False)


@history_app.command("off")
def history_off(config: ConfigOption = None, verbose: VerboseOption = False) -> None:
    """Stop storing the chats of `ask` and `chat` (llm's `logs off`); `--log` still stores one."""
    from toolbridge.cli._history_setting import set_history, settings_file

    setup_logging(verbose)
    with errors_reported():
        set_history(False)
    stderr.print(
        f"History is off: `ask` and `chat` store no chats from now on (set in {settings_file()}). "
        "Stored chats stay; `toolbridge history on` turns it back on.",
        markup=False,
    )


@history_app.command("on")
def history_on(config: ConfigOption = None, verbose: VerboseOption = False) -> None:
    """Store the chats of `ask` and `chat` again (the default); `-n/--no-log` still skips one."""
    from toolbridge.cli._history_setting import set_history

    setup_logging(verbose)
    with errors_reported():
        set_history(True)
    stderr.print("History is on: `ask` and `chat` store their chats.", markup=False)


@history_app.command("status")
def history_status(
    json: JsonOption = False, db: DbOption = None, config: ConfigOption = None, verbose: VerboseOption = False
) -> None:
    """Whether chats are stored, in which database, and how many it holds."""
    from toolbridge.cli._history_setting import history_is_on, settings_file

    setup_logging(verbose)
    with errors_reported():
        on = history_is_on()
    with open_store(db, config) as store:
        count = store.count_chats()
    if json:
        print_json({"history": "on" if on else "off", "database": store.safe_url, "chats": count,
                    "settings": str(settings_file())})  # fmt: skip
        return
    state = "on: `ask` and `chat` store their chats" if on else "off: `ask` and `chat` store no chats"
    stdout.print(f"History is {escape(state)}.")
    stdout.print(f"Database: {escape(store.safe_url)} ({count} chat{'' if count == 1 else 's'})")
