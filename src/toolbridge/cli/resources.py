"""`toolbridge resources` and `toolbridge read`: the servers' resources, listed and read."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    ServerOption,
    VerboseOption,
    check_server,
    fail,
    load,
    print_json,
    run,
    setup_logging,
    stdout,
    warn,
)
from toolbridge.cli.app import app

if TYPE_CHECKING:
    from toolbridge.types import ResourcePart


@app.command()
def resources(
    server: ServerOption = None,
    config: ConfigOption = None,
    json: JsonOption = False,
    verbose: VerboseOption = False,
) -> None:
    """List the resources and resource templates of every server (or one)."""
    setup_logging(verbose)
    loaded = load(config)
    check_server(loaded, server)
    from toolbridge.tools import Toolbox  # the MCP SDK: imported when a command needs it

    async def main() -> tuple[list[dict[str, object]], list[dict[str, object]], dict[str, str]]:
        async with Toolbox(loaded) as toolbox:
            listed = await toolbox.content.resources(server)
            templates = await toolbox.content.templates(server)
        found = [item.model_dump(mode="json") for item in listed.items]
        patterns = [item.model_dump(mode="json") for item in templates.items]
        return found, patterns, {**templates.errors, **listed.errors}

    found, patterns, errors = run(main)
    for name, error in errors.items():
        warn(f"server {name!r} could not list its resources: {error}")
    if json:
        print_json({"resources": found, "templates": patterns})
    else:
        for item in found:
            stdout.print(_line(str(item["server"]), str(item["uri"]), item))
        for item in patterns:
            stdout.print(_line(str(item["server"]), str(item["uri_template"]), item, template=True))
        if not found and not patterns:
            stdout.print("No resources.")
    if errors:
        raise typer.Exit(1)


@app.command()
def read(
    uri: Annotated[str, typer.Argument(help="The resource's URI (as `toolbridge resources` lists it).")],
    server: Annotated[
        str | None,
        typer.Option("--server", help="The server to read it from (default: the one listing it)."),
    ] = None,
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write the contents to this file ('-': raw bytes to stdout)."),
    ] = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Print a resource's text, or write its contents (binary too) to a file with --output."""
    setup_logging(verbose)
    loaded = load(config)
    check_server(loaded, server)
    from toolbridge.tools import Toolbox

    async def main() -> list[ResourcePart]:
        async with Toolbox(loaded) as toolbox:
            return await toolbox.content.read(uri, server=server)

    parts = run(main)
    if output is None:
        binary = [part for part in parts if part.text is None]
        if binary:
            kind = binary[0].mime_type or "binary"
            fail(
                f"{escape(uri)} is binary ({escape(kind)}, {len(_bytes(binary[0]))} bytes): write it to a "
                "file with --output FILE, or to stdout with --output -."
            )
        stdout.out("\n".join(part.text or "" for part in parts), highlight=False)
        return
    data = b"".join(_bytes(part) for part in parts)
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        Path(output).write_bytes(data)
    except OSError as exc:
        fail(f"cannot write {escape(output)}: {escape(exc.strerror or str(exc))}.")


def _bytes(part: ResourcePart) -> bytes:
    if part.blob is not None:
        return base64.b64decode(part.blob)
    return (part.text or "").encode()


def _line(server: str, address: str, item: dict[str, object], *, template: bool = False) -> str:
    details = [str(item[key]) for key in ("mime_type",) if item.get(key)]
    if template:
        details.insert(0, "template")
    about = str(item.get("description") or item.get("title") or item.get("name") or "")
    suffix = f" [dim]({escape(', '.join(details))})[/]" if details else ""
    return f"[dim]{escape(server)}[/]  [bold]{escape(address)}[/]{suffix}  {escape(about)}"
