"""`toolbridge stats`: per tool and server, calls, success rate, p50/p95 latency, cache hits, last error.

The success rate is of the calls that finished; declined and cancelled calls are counted apart."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from toolbridge.cli._common import ConfigOption, JsonOption, fail, print_json, stdout
from toolbridge.cli._store import DbOption, open_store
from toolbridge.cli.app import app
from toolbridge.errors import StoreError

SinceOption = Annotated[
    str | None,
    typer.Option("--since", help="Only calls since then: 30m, 1h, 7d, 2w, or an ISO date. Default: all."),
]


@app.command()
def stats(
    since: SinceOption = None, json: JsonOption = False, db: DbOption = None, config: ConfigOption = None
) -> None:
    """Tool call statistics from the log, busiest tool first."""
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
        table.add_row(
            escape(entry.tool),
            escape(entry.server or "-"),
            _calls(entry.calls, entry.denied, entry.cancelled),
            _rate(entry.success_rate),
            _seconds(entry.p50),
            _seconds(entry.p95),
            str(entry.cache_hits),
            escape(_one_line(entry.last_error or "")),
        )
    stdout.print(table)


def _calls(calls: int, denied: int, cancelled: int) -> str:
    # Below the count, on lines of their own, so the table gets no wider.
    apart = [f"{denied} declined" if denied else "", f"{cancelled} cancelled" if cancelled else ""]
    return "\n".join([str(calls), *(part for part in apart if part)])


def _rate(rate: float | None) -> str:
    # None: every call was declined or cancelled, which says nothing about the tool.
    if rate is None:
        return "-"
    style = "green" if rate >= 0.95 else "yellow" if rate >= 0.5 else "red"
    return f"[{style}]{rate:.0%}[/]"


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.2f} s"


def _one_line(text: str, limit: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
