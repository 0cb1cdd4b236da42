"""What the storage commands share: the `--db` option and opening the store it names."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolbridge.cli._common import fail, load
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


def open_store(db: str | None, config: Path | None) -> Store:
    """The store named by `--db`, `$TOOLBRIDGE_DB`, the config or the default; errors exit with a message."""
    # SQLAlchemy and Alembic: imported when a command opens the store, not for --help.
    from toolbridge.store import DATABASE_ENV_VAR, Store, resolve_database_url

    try:
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


def when(moment: datetime) -> str:
    """A time for tables: local time, to the minute."""
    return moment.astimezone().strftime("%Y-%m-%d %H:%M")
