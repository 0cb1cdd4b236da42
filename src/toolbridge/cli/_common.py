"""What every command shares: the `--config` option, running async code, and reporting failures."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import anyio
import typer
from rich.console import Console
from rich.markup import escape

from toolbridge._extras import installed, require_extra
from toolbridge.cli.app import StdoutClosed
from toolbridge.config import Config, load_config
from toolbridge.errors import ToolbridgeError

T = TypeVar("T")


class _Stdout(Console):
    def on_broken_pipe(self) -> None:
        # Rich raises SystemExit here, which tears through the event loop running the agent and ends
        # in a page of tracebacks. An ordinary exception ends the run as any failure does; the entry
        # point then exits quietly. Later writes (the run's last events) go nowhere.
        self.quiet = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise StdoutClosed


stdout = _Stdout(highlight=False, soft_wrap=True)
stderr = Console(stderr=True, highlight=False, soft_wrap=True)

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",  # long only: -c is --continue, as in llm
        help="Config file (mcpServers JSON). Default: $TOOLBRIDGE_CONFIG, ./toolbridge.json, "
        "then the user config dir.",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ServerOption = Annotated[str | None, typer.Option("--server", help="Only this server.")]
VerboseOption = Annotated[bool, typer.Option("--verbose", "-v", help="Log debug output to stderr.")]


def fail(message: str, code: int = 1) -> NoReturn:
    stderr.print(f"[bold red]error:[/] {escape(message)}", markup=True)
    raise typer.Exit(code)


def need_extra(extra: str, command: str) -> None:
    """Exit with the `pip install` line to run when `command` needs the `extra` and it is not installed."""
    try:
        require_extra(extra, f"`{command}`")
    except ToolbridgeError as exc:
        fail(str(exc))


def warn(message: str) -> None:
    stderr.print(f"[yellow]warning:[/] {escape(message)}", markup=True)


def warn_unavailable(errors: Mapping[str, str]) -> None:
    """One line per server that failed to start: its name and the reason, on stderr."""
    for name, error in errors.items():
        warn(f"MCP server {name!r} is unavailable, its tools are left out: {one_line_reason(error)}")


def one_line_reason(error: str) -> str:
    """The first line of an error, with the last line of the server's stderr when it quotes some."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    if not lines:
        return "no reason given"
    quoted = [line for line in error.splitlines()[1:] if line.startswith("  ")]
    return lines[0] + (f' (its stderr ends: "{quoted[-1].strip()}")' if quoted else "")


def check_server(config: Config, server: str | None, *, also: Sequence[str] = ()) -> None:
    """Refuse a `--server` that names neither a server of the config nor one of `also` ("native")."""
    known = [*config.servers, *also]
    if server and server not in known:
        fail(f"no server named {server!r} in the config. Known: {', '.join(known) or 'none'}.")


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )


def load(config_path: Path | None) -> Config:
    try:
        config = load_config(config_path)
    except ToolbridgeError as exc:
        fail(str(exc))
    for note in config.notes:
        stderr.print(f"note: {note}", markup=False)
    return config


@contextmanager
def errors_reported() -> Iterator[None]:
    """Toolbridge errors raised inside (no such user, chat, key...) end the command: their message on
    stderr and exit code 1."""
    try:
        yield
    except ToolbridgeError as exc:
        fail(str(exc))


def run(main: Callable[[], Awaitable[T]], *, fast_loop: bool = False) -> T:
    """Run an async command body; toolbridge errors become a message on stderr and exit code 1.
    `fast_loop`: on uvloop where it is installed (a server, whose every message costs event-loop turns)."""
    options = {"use_uvloop": True} if fast_loop and installed("uvloop") else {}  # the fast-http extra
    try:
        return anyio.run(main, backend_options=options)
    except ToolbridgeError as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        interrupted()


def interrupted() -> NoReturn:
    """Ctrl-C: say so on stderr and exit 130, as shells expect."""
    stderr.print("interrupted")
    raise typer.Exit(130) from None


def print_json(data: Any) -> None:
    stdout.out(json.dumps(data, indent=2, ensure_ascii=False), highlight=False)


def start_tracing(config: Config, *, command: str) -> None:
    """Export traces over OTLP when the config or $OTEL_EXPORTER_OTLP_ENDPOINT names a collector (every
    command that makes tool calls: `serve`, `gateway`, `ask`, `chat`, `call`). Fails with a clear error
    when export is asked for and cannot be done."""
    from toolbridge.telemetry import TracingUnavailable, configure_tracing

    config.check_resolved("telemetry", used_by=command)
    try:
        configure_tracing(config.telemetry.otlp_endpoint)
    except (TracingUnavailable, ToolbridgeError) as exc:
        fail(str(exc))
