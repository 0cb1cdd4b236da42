"""`toolbridge auth login|status|logout`: OAuth sign-ins to remote MCP servers.

Tokens go to the token file (`$TOOLBRIDGE_TOKENS`, default `oauth-tokens.json` in the user data folder,
mode 0600); every command uses them, and `chat` signs in by itself on a server's first use.
"""

from __future__ import annotations

import os
import sys
import time
import webbrowser
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from toolbridge.cli._common import (
    ConfigOption,
    JsonOption,
    VerboseOption,
    fail,
    load,
    print_json,
    run,
    setup_logging,
    stderr,
    stdout,
)
from toolbridge.cli.app import app

if TYPE_CHECKING:
    from toolbridge.config import Config
    from toolbridge.config.model import ServerConfig
    from toolbridge.mcp.oauth import SignIn, SignOut, StoredLogin

auth_app = typer.Typer(help="Sign in to remote MCP servers that use OAuth, see the sign-ins, sign out.")
app.add_typer(auth_app, name="auth")

ServerArgument = Annotated[str, typer.Argument(help="The server's name in the config.", show_default=False)]
NoBrowserOption = Annotated[
    bool, typer.Option("--no-browser", help="Print the sign-in address instead of opening a browser.")
]


@auth_app.callback(invoke_without_command=True)
def auth(
    ctx: typer.Context, config: ConfigOption = None, json: JsonOption = False, verbose: VerboseOption = False
) -> None:
    """Sign in to remote MCP servers that use OAuth (`auth login`), see the sign-ins (`auth status`, also
    shown with no command), sign out (`auth logout`)."""
    if ctx.invoked_subcommand is None:
        status(config=config, json=json, verbose=verbose)


@auth_app.command()
def login(
    server: ServerArgument,
    no_browser: NoBrowserOption = False,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Sign in to SERVER in the browser (a callback on 127.0.0.1 receives the result) and keep the tokens."""
    setup_logging(verbose)
    target = _http_server(load(config), server)

    from toolbridge.mcp import ServerConnection
    from toolbridge.mcp.client_features import ClientFeatures
    from toolbridge.mcp.oauth import FileTokenStore, OAuth, ServerTokenStorage

    tokens = FileTokenStore()
    storage = ServerTokenStorage(target, tokens)

    async def main() -> StoredLogin | None:
        await storage.forget_tokens()  # a new sign-in, not the old tokens; the client registration stays
        features = ClientFeatures(
            oauth=OAuth(tokens=tokens, sign_in=browser_sign_in(open_browser=not no_browser))
        )
        async with ServerConnection(target, features=features) as connection:
            await connection.connect()
        return await storage.login()

    signed_in = run(main)
    if signed_in is None or signed_in.tokens is None:
        stdout.print(f"Server {server!r} did not ask for a sign-in: it is usable without one.", markup=False)
        return
    scope = f" (scopes: {signed_in.scope})" if signed_in.scope else ""
    stdout.print(f"Signed in to {server}{scope}. The tokens are kept in {tokens.path}.", markup=False)


@auth_app.command()
def status(config: ConfigOption = None, json: JsonOption = False, verbose: VerboseOption = False) -> None:
    """Every HTTP server of the config: signed in or not, with which scopes, until when."""
    setup_logging(verbose)
    loaded = load(config)
    from toolbridge.mcp.oauth import FileTokenStore, ServerTokenStorage

    servers = [server for server in loaded.servers.values() if server.transport != "stdio" and server.url]
    tokens = FileTokenStore()

    async def logins() -> list[StoredLogin | None]:
        return [await ServerTokenStorage(server, tokens).login() for server in servers]

    rows = [_status(server, stored) for server, stored in zip(servers, run(logins), strict=True)]
    if json:
        print_json(rows)
        return
    if not rows:
        stdout.print("No HTTP MCP servers are configured: only those can use OAuth.")
        return
    table = Table("server", "signed in", "scopes", "expires", "url")
    for row in rows:
        table.add_row(
            row["server"], "yes" if row["signed_in"] else "no", row["scope"] or "", _expiry(row), row["url"]
        )
    stdout.print(table)


@auth_app.command()
def logout(server: ServerArgument, config: ConfigOption = None, verbose: VerboseOption = False) -> None:
    """Revoke SERVER's tokens at its authorization server (when it offers revocation), then forget them
    and the client registration; the next use signs in again."""
    setup_logging(verbose)
    target = _http_server(load(config), server)
    from toolbridge.mcp.oauth import FileTokenStore, sign_out

    tokens = FileTokenStore()

    async def main() -> SignOut:
        return await sign_out(target, tokens)

    outcome = run(main)
    for failure in outcome.failures:
        stderr.print(f"Warning: server {server!r}: {failure}.", markup=False)
    if outcome.failures:
        stderr.print(
            "The tokens were removed here anyway; they may stay valid at the server until they expire.",
            markup=False,
        )
    if not outcome.removed:
        stdout.print(f"{server} was not signed in.", markup=False)
    elif outcome.revoked:
        stdout.print(
            f"Signed out of {server}: its tokens were revoked at {outcome.revocation_endpoint} and removed.",
            markup=False,
        )
    else:
        stdout.print(f"Signed out of {server}: its tokens were removed.", markup=False)


def browser_sign_in(*, open_browser: bool = True) -> SignIn:
    """The CLI's browser step: open the address (when a browser can be opened) and always print it."""
    from toolbridge.mcp.oauth import loopback_sign_in

    def show(server: str, url: str) -> None:
        opened = open_browser and _can_open_browser() and webbrowser.open(url)
        how = "Your browser was opened at this address" if opened else "Open this address in a browser"
        stderr.print(
            f"Server {server!r} needs you to sign in. {how}:\n{url}\nWaiting for the sign-in...", markup=False
        )

    return loopback_sign_in(show)


def _can_open_browser() -> bool:
    # Without a display there is no browser to open on Linux; webbrowser would try text ones in the terminal.
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def _http_server(config: Config, name: str) -> ServerConfig:
    server = config.servers.get(name)
    if server is None:
        known = ", ".join(config.servers) or "none"
        fail(f"no MCP server named {name!r} is configured (configured: {known}).")
    if server.transport == "stdio" or not server.url:
        fail(f"server {name!r} runs over stdio; OAuth sign-in is for servers reached over HTTP.")
    if any(header.lower() == "authorization" for header in server.headers):
        fail(f"server {name!r} sends its own Authorization header; remove it from 'headers' to use OAuth.")
    return server


def _status(server: ServerConfig, stored: StoredLogin | None) -> dict[str, Any]:
    current = stored if stored is not None and stored.url == server.url else None
    tokens = current.tokens if current is not None else None
    return {
        "server": server.name,
        "url": server.url,
        "signed_in": tokens is not None,
        "scope": tokens.scope if tokens is not None else None,
        "expires_at": current.expires_at if current is not None and tokens is not None else None,
        "refreshable": bool(tokens is not None and tokens.refresh_token),
        "client_id": current.client.client_id if current is not None and current.client is not None else None,
    }


def _expiry(row: dict[str, Any]) -> str:
    expires_at = row["expires_at"]
    if expires_at is None:
        return ""
    left = expires_at - time.time()
    refresh = " (refreshed on next use)" if row["refreshable"] else " (sign in again)"
    if left <= 0:
        return "expired" + refresh
    return f"in {_duration(left)}"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"
