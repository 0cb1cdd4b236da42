"""`toolbridge parse`: show what toolbridge sees in a model's output (for "why was my call not detected?")."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from toolbridge.cli._common import ConfigOption, VerboseOption, fail, load, print_json, setup_logging
from toolbridge.cli.app import app
from toolbridge.models.model_profiles import MODEL_PROFILES
from toolbridge.parsing import available_formats, call_format, dialect_names, parse


@app.command("parse")
def parse_command(
    file: Annotated[
        Path | None,
        typer.Argument(help="A file with the model's output; stdin when omitted.", show_default=False),
    ] = None,
    format: Annotated[
        str, typer.Option("--format", "-f", help="Tool-call format (dialect); see --formats.")
    ] = "auto",
    formats: Annotated[
        bool, typer.Option("--formats", help="List the formats, their markers and example models.")
    ] = False,
    reasoning_open: Annotated[
        bool | None,
        typer.Option(
            "--reasoning-open/--reasoning-closed",
            help="Whether the prompt may have opened reasoning (a hint: the output decides). Default: detect.",
            show_default=False,
        ),
    ] = None,
    truncated: Annotated[
        bool,
        typer.Option("--truncated", help="The output was cut off (finish reason `length`): no cut-off call."),
    ] = False,
    tools: Annotated[
        Path | None,
        typer.Option(
            "--tools",
            help='JSON file of the tools offered ({"name": schema} or a list with "name" and '
            '"inputSchema"): bare-text argument values are typed by it.',
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Print the content, reasoning, tool calls and errors found in a model's output, as JSON."""
    setup_logging(verbose)
    if formats:
        _print_formats()
        return
    if config is not None:
        load(config)  # parsing needs no config; one named explicitly is still checked
    if format not in available_formats():
        fail(f"unknown format {format!r}; choose one of: {', '.join(available_formats())}")
    schemas = _read_schemas(tools) if tools is not None else None
    try:
        text = file.read_text(encoding="utf-8") if file is not None else sys.stdin.read()
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror}")
    result = parse(text, format, reasoning_open=reasoning_open, truncated=truncated, schemas=schemas)
    print_json(result.to_dict())


def _print_formats() -> None:
    rows = [("auto", "every format below, each recognised by its markers", "")]
    for name in dialect_names():
        fmt = call_format(name)
        markers = "  ".join(fmt.opening_markers)
        if fmt.named_markers:  # bare forms, read only when the format is named
            markers += ("  " if markers else "") + "  ".join(fmt.named_markers) + f"  (with --format {name})"
        models = ", ".join(pattern for pattern, profile in MODEL_PROFILES if profile.dialect == name)
        rows.append((name, markers, models))
    width = max(len(name) for name, _, _ in rows) + 2
    for name, markers, models in rows:
        print(f"{name:<{width}}{markers}")
        if models:
            print(f"{'':<{width}}models: {models}")


def _read_schemas(path: Path) -> dict[str, Mapping[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"cannot read {path}: {exc.strerror}")
    except ValueError as exc:
        fail(f"{path} is not JSON ({exc}); give the tools as a JSON object or list")
    if isinstance(data, dict) and all(isinstance(schema, dict) for schema in data.values()):
        return data
    if isinstance(data, list) and all(isinstance(tool, dict) and "name" in tool for tool in data):
        return {
            tool["name"]: tool.get("inputSchema") or tool.get("input_schema") or tool.get("parameters") or {}
            for tool in data
        }
    fail(f'{path}: expected {{"tool name": schema, ...}} or a list of tools with "name" and "inputSchema"')
