"""`toolbridge provider-keys`: model providers' API keys kept on this machine (`llm keys` in `llm`).

A stored key is used when a model's config entry has no `api_key` and the provider's environment
variable is not set. Keys are read from a hidden prompt, or from stdin when it is not a terminal, never
from the command line: a key there would stay in the shell's history.
"""

from __future__ import annotations

import getpass
import os
import sys
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    errors_reported,
    fail,
    print_json,
    setup_logging,
    stderr,
    stdout,
)
from toolbridge.cli.app import app
from toolbridge.models.provider_keys import (
    known_provider,
    masked,
    provider_keys_file,
    remove_provider_key,
    store_provider_key,
    stored_provider_keys,
)
from toolbridge.models.provider_profiles import PROFILES, provider_names

provider_keys_app = typer.Typer(
    help="Model providers' API keys stored on this machine: set (asked for, hidden), list, remove, path.",
    no_args_is_help=True,
)
app.add_typer(provider_keys_app, name="provider-keys")


@provider_keys_app.callback()
def provider_keys(config: ConfigOption = None, verbose: VerboseOption = False) -> None:
    """Model providers' API keys stored on this machine."""
    setup_logging(verbose)


ProviderArgument = Annotated[
    str, typer.Argument(metavar="NAME", help=f"The provider: {', '.join(provider_names())}.")
]


@provider_keys_app.command("set")
def set_key(
    name: ProviderArgument,
    given: Annotated[list[str] | None, typer.Argument(hidden=True)] = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Store NAME's API key, typed at a hidden prompt (or piped in: `... | toolbridge provider-keys set NAME`)."""
    setup_logging(verbose)
    if given:
        fail(
            "give the key at the prompt or on stdin, not on the command line, where it would stay in "
            f"your shell's history: toolbridge provider-keys set {name}"
        )
    with errors_reported():
        provider = known_provider(name).name
        key = _read_key(provider)
        store_provider_key(provider, key)
    stderr.print(
        f"Stored the key for {provider} in {escape(str(provider_keys_file()))}.",
        markup=False,
        highlight=False,
    )
    variable = PROFILES[provider].api_key_env
    if variable and os.environ.get(variable, "").strip():
        stderr.print(
            f"note: ${variable} is set, and is used before the stored key while it is.", markup=False
        )


def _read_key(provider: str) -> str:
    if sys.stdin.isatty():
        try:
            return getpass.getpass(f"API key for {provider} (not shown): ")
        except (EOFError, KeyboardInterrupt):
            stderr.print()
            fail("no key given; nothing was stored")
    return sys.stdin.read()


@provider_keys_app.command("list")
def list_keys(json: JsonOption = False, config: ConfigOption = None, verbose: VerboseOption = False) -> None:
    """The providers that have a key here, where each comes from, and its last four characters."""
    setup_logging(verbose)
    path = provider_keys_file()
    with errors_reported():
        stored = stored_provider_keys()
    rows: list[dict[str, Any]] = []
    for provider in provider_names():
        variable = PROFILES[provider].api_key_env
        from_env = os.environ.get(variable, "").strip() if variable else ""
        if provider not in stored and not from_env:
            continue
        used = from_env or stored[provider]
        source = f"${variable}" if from_env else "stored"
        if from_env and provider in stored:
            source += " (used first; a stored key too)"
        rows.append({"provider": provider, "key": masked(used), "from": source, "stored": provider in stored})
    if json:
        print_json({"file": str(path), "keys": rows})
        return
    if not rows:
        stdout.print(
            f"No provider keys here (they would be stored in {escape(str(path))}). "
            "Store one with `toolbridge provider-keys set NAME`."
        )
        return
    table = Table("provider", "key", "from")
    for row in rows:
        table.add_row(row["provider"], row["key"], escape(row["from"]))
    stdout.print(table)
    stdout.print(f"Stored keys are in {escape(str(path))}.")


@provider_keys_app.command("remove")
def remove_key(name: ProviderArgument, config: ConfigOption = None, verbose: VerboseOption = False) -> None:
    """Forget the key stored for NAME (an environment variable stays as it is)."""
    setup_logging(verbose)
    with errors_reported():
        provider = known_provider(name).name
        removed = remove_provider_key(provider)
    if not removed:
        fail(f"no key is stored for {provider}; `toolbridge provider-keys list` shows the keys")
    stderr.print(f"Removed the key stored for {provider}.", markup=False)


@provider_keys_app.command("path")
def path(config: ConfigOption = None, verbose: VerboseOption = False) -> None:
    """Print where the keys are stored (`$TOOLBRIDGE_KEYS_FILE` overrides it)."""
    setup_logging(verbose)
    stdout.out(str(provider_keys_file()), highlight=False)
