"""`toolbridge users` and `toolbridge access-keys`: who may use `toolbridge serve`, and their API keys.

Once any user exists, every request to `toolbridge serve` needs a user's key (or the server's token).
The keys of model providers are another thing: `toolbridge provider-keys`. `toolbridge keys`, the old
name of `access-keys`, still works (hidden, with a note naming the new one).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    errors_reported,
    print_json,
    setup_logging,
    stderr,
    stdout,
)
from toolbridge.cli._store import DbOption, open_store, when
from toolbridge.cli.app import app

users_app = typer.Typer(
    help="Users of `toolbridge serve`: add, list, remove. With any user, keys are required."
)
keys_app = typer.Typer(
    help="Access keys of `toolbridge serve`'s users: create (shown once), list, revoke. "
    "(Model providers' keys: `toolbridge provider-keys`.)"
)
app.add_typer(users_app, name="users")
app.add_typer(keys_app, name="access-keys")
app.add_typer(keys_app, name="keys", hidden=True)  # the old name; the callback says which is new

UserArgument = Annotated[str, typer.Argument(metavar="NAME", help="The user's name.")]


@users_app.callback(invoke_without_command=True)
def users(
    ctx: typer.Context,
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """List the users (the same as `users list`)."""
    if ctx.invoked_subcommand is None:
        list_users(json=json, db=db, config=config, verbose=verbose)


@users_app.command("list")
def list_users(
    json: JsonOption = False, db: DbOption = None, config: ConfigOption = None, verbose: VerboseOption = False
) -> None:
    """The users, whether each is an admin, and how many live keys each has."""
    setup_logging(verbose)
    with open_store(db, config) as store:
        found = store.users.all()
    if json:
        print_json([user.model_dump(mode="json") for user in found])
        return
    if not found:
        stdout.print("No users: `toolbridge serve` needs no key. Add one with `toolbridge users add NAME`.")
        return
    table = Table("name", "admin", "keys", "created")
    for user in found:
        table.add_row(escape(user.name), "yes" if user.admin else "", str(user.keys), when(user.created_at))
    stdout.print(table)


@users_app.command("add")
def add_user(
    name: UserArgument,
    admin: Annotated[bool, typer.Option("--admin", help="May see every chat and manage servers.")] = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Add a user. From now on `toolbridge serve` asks every request for a key."""
    setup_logging(verbose)
    with open_store(db, config) as store, errors_reported():
        store.users.add(name, admin=admin)
    role = "admin" if admin else "user"
    stdout.print(
        f"Added {role} {escape(name)}. Give them a key: toolbridge access-keys create --user {escape(name)}"
    )


@users_app.command("remove")
def remove_user(
    name: UserArgument, db: DbOption = None, config: ConfigOption = None, verbose: VerboseOption = False
) -> None:
    """Remove a user and their keys. Their chats stay, seen by admins only."""
    setup_logging(verbose)
    with open_store(db, config) as store, errors_reported():
        store.users.remove(name)
    stdout.print(f"Removed user {escape(name)} and their keys.")


@keys_app.callback(invoke_without_command=True)
def keys(
    ctx: typer.Context,
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """List the keys (the same as `access-keys list`)."""
    if ctx.info_name == "keys":
        stderr.print(
            "note: `toolbridge keys` is now `toolbridge access-keys` (model providers' keys: "
            "`toolbridge provider-keys`)",
            markup=False,
        )
    if ctx.invoked_subcommand is None:
        list_keys(user=None, json=json, db=db, config=config, verbose=verbose)


@keys_app.command("create")
def create_key(
    user: Annotated[str, typer.Option("--user", "-u", help="Whose key it is.")],
    name: Annotated[str | None, typer.Option("--name", help="A label: which app or machine uses it.")] = None,
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Create a key and print it: it is shown this once (only its hash is stored)."""
    setup_logging(verbose)
    with open_store(db, config) as store, errors_reported():
        key, record = store.users.create_key(user, label=name)
    if json:
        print_json({"key": key, **record.model_dump(mode="json")})
        return
    # The key alone on stdout, so `$(toolbridge access-keys create ...)` captures it; the note goes to stderr.
    stdout.out(key, highlight=False)
    typer.echo(
        f"The key of {user} (prefix {record.prefix}); it is not shown again. "
        "Use it as the bearer token / OpenAI api_key.",
        err=True,
    )


@keys_app.command("list")
def list_keys(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user's keys.")] = None,
    json: JsonOption = False,
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Every key: prefix, label, user, created, last used, and whether it is revoked."""
    setup_logging(verbose)
    with open_store(db, config) as store, errors_reported():
        found = store.users.keys(user)
    if json:
        print_json([key.model_dump(mode="json") for key in found])
        return
    if not found:
        stdout.print("No keys. Create one with `toolbridge access-keys create --user NAME`.")
        return
    table = Table("prefix", "label", "user", "created", "last used", "revoked")
    for key in found:
        table.add_row(
            key.prefix,
            escape(key.label or ""),
            escape(key.user),
            when(key.created_at),
            when(key.last_used_at) if key.last_used_at else "never",
            when(key.revoked_at) if key.revoked_at else "",
        )
    stdout.print(table)


@keys_app.command("revoke")
def revoke_key(
    prefix: Annotated[
        str, typer.Argument(metavar="PREFIX", help="The key's prefix (from `access-keys list`).")
    ],
    db: DbOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Revoke a key: requests with it are refused from now on."""
    setup_logging(verbose)
    with open_store(db, config) as store, errors_reported():
        record = store.users.revoke_key(prefix)
    stdout.print(f"Revoked key {record.prefix} of {escape(record.user)}.")
