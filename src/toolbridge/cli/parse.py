"""`toolbridge parse`: show what toolbridge sees in a model's output (for "why was my call not detected?")."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from toolbridge.cli._common import ConfigOption, VerboseOption, fail, load, print_json, setup_logging
from toolbridge.cli.app import app
from toolbridge.parsing import available_formats, parse


@app.command("parse")
def parse_command(
    file: Annotated[
        Path | None,
        typer.Argument(help="A file with the model's output; stdin when omitted.", show_default=False),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", "-f", help=f"Tool-call format: {', '.join(available_formats())}.")
    ] = "auto",
    reasoning_open: Annotated[
        bool | None,
        typer.Option(
            "--starts-in-reasoning/--starts-in-content",
            help="Whether the output begins inside <think> (opened by the prompt). Default: detect.",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Print the content, reasoning, tool calls and errors found in a model's output, as JSON."""
    setup_logging(verbose)
    if config is not None:
        load(config)  # parsing needs no config; one named explicitly is still checked
    if format not in available_formats():
        fail(f"unknown format {format!r}; choose one of: {', '.join(available_formats())}")
    try:
        text = file.read_text(encoding="utf-8") if file is not None else sys.stdin.read()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror}")
    print_json(parse(text, format, reasoning_open=reasoning_open).to_dict())
