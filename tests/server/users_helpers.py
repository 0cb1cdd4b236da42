"""Users and keys made through the real CLI (Typer's CliRunner, in-process), for the server's tests."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from toolbridge.cli.commands import app


def cli(db_url: str, *args: str) -> str:
    """Run `toolbridge ARGS --db DB_URL`; its stdout (a failure fails the test)."""
    result = CliRunner().invoke(app, [*args, "--db", db_url])
    assert result.exit_code == 0, result.stderr + result.stdout
    return result.stdout


def cli_json(db_url: str, *args: str) -> Any:
    return json.loads(cli(db_url, *args, "--json"))


def add_user(db_url: str, name: str, *, admin: bool = False, label: str | None = None) -> str:
    """Add user `name` and create a key for them; the key."""
    cli(db_url, "users", "add", name, *(["--admin"] if admin else []))
    return new_key(db_url, name, label=label)


def new_key(db_url: str, user: str, *, label: str | None = None) -> str:
    return cli(db_url, "access-keys", "create", "--user", user, *(["--name", label] if label else [])).strip()


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
