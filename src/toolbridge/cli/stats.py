"""`toolbridge stats`: per tool and server, calls, success rate, p50/p95 latency, cache hits, last error."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    fail,
    print_json,
    setup_logging,
    stdout,
)
from toolbridge.cli._store import DbOption, open_store
from toolbridge.cli.app import app
from toolbridge.errors import StoreError

SinceOption = Annotated[
    str | None,
    typer.Option("--since", help="Only calls since then: 30m, 1h, 7d, 2w, or an ISO date. Default: all."),
]


@app.command()
def stats(
    since: SinceOption = None,
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Tool call statistics from the log, busiest tool first."""
    setup_logging(verbose)
    try:
        from toolbridge.store import parse_since

        start = parse_since(since) if since else None
    except StoreError as exc:
        fail(f"--since: {exc}")
    with open_store(db, config) as store:
        figures = store.tool_stats(since=start)
    if json:
        print_json([entry.model_dump(mode="json") for entry in figures])
        return
    if not figures:
        stdout.print("No tool calls logged" + (f" since {since}." if since else "."))
        return
    table = Table("tool", "server", "calls", "success", "p50", "p95", "cache hits", "last error")
    for entry in figures:
        rate = entry.success_rate
        style = "green" if rate >= 0.95 else "yellow" if rate >= 0.5 else "red"
        table.add_row(
            escape(entry.tool),
            escape(entry.server or "-"),
            str(entry.calls),
            f"[{style}]{rate:.0%}[/]",
            _seconds(entry.p50),
            _seconds(entry.p95),
            str(entry.cache_hits),
            escape(_one_line(entry.last_error or "")),
        )
    stdout.print(table)


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _one_line(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
