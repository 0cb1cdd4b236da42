"""`toolbridge models`: the models the config names, which one is the default, and how to name others."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    fail,
    load,
    print_json,
    setup_logging,
    stdout,
)
from toolbridge.cli.app import app
from toolbridge.errors import ToolbridgeError

_OTHERS = (
    "Also usable without configuring: demo (no key, no network) and provider:model (e.g. openai:gpt-4o-mini)."
)


@app.command()
def models(config: ConfigOption = None, json: JsonOption = False, verbose: VerboseOption = False) -> None:
    """List the models configured under 'models': name, provider, model id, tool mode, and the default."""
    setup_logging(verbose)
    loaded = load(config)
    from toolbridge.models import model_configs

    try:
        configured = model_configs(loaded)
    except ToolbridgeError as exc:
        fail(str(exc))
    # As resolve_model picks it: the named default, else the only configured model.
    default = loaded.default_model or (next(iter(configured)) if len(configured) == 1 else None)
    rows = [
        {
            "name": name,
            "provider": settings.provider,
            "model": settings.model,
            "base_url": settings.base_url,
            "tool_mode": settings.tool_mode,
            "default": name == default,
        }
        for name, settings in configured.items()
    ]
    if json:
        print_json(rows)
        return
    if not configured:
        where = loaded.path or "no config file found"
        stdout.print(
            f"No models configured ({escape(str(where))}). Add a 'models' section to toolbridge.json."
        )
        stdout.print(_OTHERS)
        return
    table = Table("name", "provider", "model", "tool mode", "default")
    for name, settings in configured.items():
        table.add_row(
            escape(name),
            escape(settings.provider),
            escape(settings.model or ""),
            settings.tool_mode,
            "[green]yes[/]" if name == default else "",
        )
    stdout.print(table)
    stdout.print(f"[dim]{_OTHERS}[/]")
