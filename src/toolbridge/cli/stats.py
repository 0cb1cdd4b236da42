"""`toolbridge stats`: per tool and server, calls (and who made them), success rate, p50/p95 latency,
cache hits, last error.

The success rate is of the calls that finished; declined and cancelled calls are counted apart."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    errors_reported,
    fail,
    print_json,
    setup_logging,
    stdout,
)
from toolbridge.cli._store import DbOption, open_store
from toolbridge.cli.app import app
from toolbridge.errors import StoreError

if TYPE_CHECKING:
    from toolbridge.store import ToolStats

SinceOption = Annotated[
    str | None,
    typer.Option("--since", help="Only calls since then: 30m, 1h, 7d, 2w, or an ISO date. Default: all."),
]


UserOption = Annotated[
    str | None,
    typer.Option(
        "--user", "-u", help="Only the calls made with this user's keys; first, their runs and model tokens."
    ),
]


@app.command()
def stats(
    since: SinceOption = None,
    user: UserOption = None,
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
        with errors_reported():
            user_id = store.users.user_id(user) if user is not None else None
        figures = store.tool_stats(since=start, user_id=user_id)
        usage = store.users.usage(user_id, since=start) if user_id is not None else None
    if usage is not None and not json:
        stdout.print(
            f"{user}: {usage.runs} runs, {usage.input_tokens:,} model tokens in, {usage.output_tokens:,} out",
            markup=False,
        )
    if json:
        print_json([entry.model_dump(mode="json") for entry in figures])
        return
    if not figures:
        by = f" by {user}" if user else ""
        stdout.print(f"No tool calls logged{by}" + (f" since {since}." if since else "."))
        return
    table = _table(figures)
    if _width_without_cutting(table) <= stdout.width:
        stdout.print(table)
    else:  # too narrow for the columns: one block per tool, so no name is ever cut
        for entry in figures:
            stdout.print(_block(entry))


def _width_without_cutting(table: Table) -> int:
    """The width the table needs to show every no-wrap column whole (rich would squeeze them)."""
    widths = [
        max(_cell_width(cell) for cell in [column.header, *column.cells])
        if column.no_wrap
        else column.min_width or 1
        for column in table.columns
    ]
    return sum(widths) + 3 * len(widths) + 1  # each column's padding and border, and the last border


def _cell_width(cell: object) -> int:
    return max((len(line) for line in Text.from_markup(str(cell)).plain.splitlines()), default=0)


def _table(figures: list[ToolStats]) -> Table:
    table = Table()
    for header in ("tool", "server"):
        table.add_column(header, no_wrap=True)  # names are what people search for: keep them whole
    table.add_column("calls", no_wrap=True, justify="right")
    table.add_column("callers", no_wrap=True)
    for header in ("success", "p50", "p95", "cache hits"):
        table.add_column(header, no_wrap=True, justify="right")
    table.add_column("last error", min_width=12, overflow="fold")
    for entry in figures:
        table.add_row(
            escape(entry.tool),
            escape(entry.server or "-"),
            _calls(entry.calls, entry.denied, entry.cancelled),
            "\n".join(f"{count} {caller}" for caller, count in entry.callers.items()),
            _rate(entry.success_rate),
            _seconds(entry.p50),
            _seconds(entry.p95),
            str(entry.cache_hits),
            escape(_one_line(entry.last_error or "")),
        )
    return table


def _block(entry: ToolStats) -> Text:
    block = Text.from_markup(f"[bold]{escape(entry.tool)}[/] [dim]({escape(entry.server or '-')})[/]\n")
    block.append_text(
        Text.from_markup(
            f"  {entry.calls} call{'' if entry.calls == 1 else 's'}"
            + "".join(
                f", {n} {what}"
                for n, what in ((entry.denied, "declined"), (entry.cancelled, "cancelled"))
                if n
            )
            + f" ({_callers(entry.callers)})"
            + f", {_rate(entry.success_rate)} ok, p50 {_seconds(entry.p50)}, p95 {_seconds(entry.p95)}, "
            f"{entry.cache_hits} cache hits"
        )
    )
    if entry.last_error:
        block.append(f"\n  last error: {_one_line(entry.last_error)}")
    return block


def _calls(calls: int, denied: int, cancelled: int) -> str:
    # Below the count, on lines of their own, so the table gets no wider.
    apart = [f"{denied} declined" if denied else "", f"{cancelled} cancelled" if cancelled else ""]
    return "\n".join([str(calls), *(part for part in apart if part)])


def _callers(callers: dict[str, int]) -> str:
    return ", ".join(f"{count} {caller}" for caller, count in callers.items())


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
