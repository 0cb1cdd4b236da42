"""What the storage commands share: the `--db` option and opening the store it names."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer

from toolbridge._extras import findable, installed
from toolbridge.cli._common import fail, load, stderr
from toolbridge.errors import ToolbridgeError

if TYPE_CHECKING:
    from toolbridge.store import Store

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help='Database URL or SQLite file. Default: $TOOLBRIDGE_DB, the config\'s "database", '
        "then toolbridge.db in the user data dir.",
        show_default=False,
    ),
]


_DATABASE_ENV_VAR = "TOOLBRIDGE_DB"
"""`toolbridge.store.DATABASE_ENV_VAR`, read here without the `store` extra."""


def open_store(db: str | None, config: Path | None) -> Store:
    """The store named by `--db`, `$TOOLBRIDGE_DB`, the config or the default; errors exit with a message
    (also the `store` extra's absence)."""
    try:
        # SQLAlchemy and Alembic: imported when a command opens the store, not for --help (without
        # the `store` extra, a MissingExtraError).
        from toolbridge.store import DATABASE_ENV_VAR, Store, resolve_database_url

        # The config file is read only when it decides: with neither --db nor $TOOLBRIDGE_DB.
        decided = db or os.environ.get(DATABASE_ENV_VAR)
        if decided:
            url = resolve_database_url(db)
        else:
            settings = load(config)
            settings.check_resolved("database", used_by="the database setting")
            url = resolve_database_url(None, settings.database)
        return Store(url)
    except ToolbridgeError as exc:
        fail(str(exc))


def open_history(db: str | None, config: Path | None) -> Store | None:
    """The store of a command that keeps what it did when it can (`ask`, `chat`, `call`): None, and
    nothing kept, when the `store` extra is not installed and neither `--db` nor `$TOOLBRIDGE_DB` asks
    for a database."""
    asked = db or os.environ.get(_DATABASE_ENV_VAR)
    if not asked and not (installed("sqlalchemy") and findable("alembic")):
        return None
    return open_store(db, config)


class Continued(NamedTuple):
    chat_id: int | None
    """None: a new chat."""
    agent: str | None
    model: str | None


def chat_to_continue(
    store: Store, chat_id: int | None, agent: str | None, model: str | None, *, or_new: bool = False
) -> Continued:
    """The chat to continue (`chat_id`, or the latest) and the agent and model to continue it with (the
    chat's own unless --agent or --model says). With no chat stored yet: `or_new` starts one (`ask -c`,
    as `llm -c` does, with a note), else the command fails."""
    if chat_id is None:
        latest = store.list_chats(limit=1)
        if not latest and or_new:
            stderr.print("note: no earlier chat to continue; this starts one", markup=False)
            return Continued(None, agent, model)
        if not latest:
            fail(
                "there is no stored chat to continue yet; start one with `toolbridge ask` or `toolbridge chat`."
            )
        chat = latest[0]
    else:
        chat = store.get_chat(chat_id)
    return Continued(chat.id, agent or chat.agent, model or chat.model)


def when(moment: datetime) -> str:
    """A time for tables: local time, to the minute."""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")
