"""`toolbridge gateway`: the configured servers' tools behind one MCP server, for any MCP client.

A Claude Desktop or Cursor entry can then be
`{"command": "toolbridge", "args": ["gateway", "--agent", "excel-helper"]}`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from toolbridge.cli._agent_options import AgentOption
from toolbridge.cli._common import (
    ConfigOption,
    VerboseOption,
    fail,
    load,
    need_extra,
    run,
    setup_logging,
    start_tracing,
    stderr,
)
from toolbridge.cli._store import DbOption, open_store
from toolbridge.cli.app import app
from toolbridge.errors import ToolbridgeError

if TYPE_CHECKING:
    from pathlib import Path

    from toolbridge.gateway import GatewaySetup

NoNativeOption = Annotated[
    bool, typer.Option("--no-native", help="Offer only the MCP servers' tools, not toolbridge's own.")
]
HttpOption = Annotated[
    bool,
    typer.Option("--http", help="Serve streamable HTTP at /mcp (and SSE at /sse) instead of stdin/stdout."),
]
HostOption = Annotated[
    str | None,
    typer.Option(
        "--host",
        help="With --http: address to listen on. Default: 127.0.0.1 (this machine only).",
        show_default=False,
    ),
]
PortOption = Annotated[
    int | None, typer.Option("--port", "-p", help="With --http: port. Default: 8766.", show_default=False)
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="With --http: require 'Authorization: Bearer TOKEN' (required off 127.0.0.1, and there at "
        "least 16 characters); the config's "
        "gateway.tokens are accepted too. Default: $TOOLBRIDGE_TOKEN.",
        show_default=False,
    ),
]


@app.command()
def gateway(
    agent: AgentOption = None,
    no_native: NoNativeOption = False,
    http: HttpOption = False,
    host: HostOption = None,
    port: PortOption = None,
    token: TokenOption = None,
    config: ConfigOption = None,
    db: DbOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Serve the configured MCP servers' tools, resources and prompts as one MCP server over
    stdin/stdout (or HTTP with --http)."""
    need_extra("gateway", "toolbridge gateway")
    from toolbridge.gateway import GatewaySetup
    from toolbridge.store import CallLog
    from toolbridge.telemetry.metrics import install_metrics

    setup_logging(verbose)  # on stderr: stdout carries the protocol
    if not http and (host is not None or port is not None or token is not None):
        fail("--host, --port and --token are for --http; add --http to serve over HTTP")
    loaded = load(config)
    try:
        setup = GatewaySetup.of(loaded, agent, native=not no_native)
        # The gateway's calls are traced and counted like an agent's.
        start_tracing(loaded, command="toolbridge gateway")
        install_metrics()
    except ToolbridgeError as exc:
        fail(str(exc))
    if http:
        _serve_http(setup, host=host, port=port, token=token, db=db, config=config)
        return
    with open_store(db, config) as store:
        served = setup.build(call_log=CallLog(store.log_tool_calls))

        async def main() -> None:
            async with served.toolbox:
                await served.serve_stdio()

        run(main, fast_loop=True)


def _serve_http(
    setup: GatewaySetup,
    *,
    host: str | None,
    port: int | None,
    token: str | None,
    db: str | None,
    config: Path | None,
) -> None:
    from toolbridge.gateway.http import HttpSettings, http_app
    from toolbridge.server import listen, run_server
    from toolbridge.store import CallLog

    try:
        settings = HttpSettings.from_config(setup.config, host=host, port=port, token=token)
        settings.check_bind()
        sock = listen(settings.host, settings.port, command="toolbridge gateway --http")
    except ToolbridgeError as exc:
        fail(str(exc))
    with sock, open_store(db, config) as store:
        # The toolbox is opened by the app's lifespan, on uvicorn's event loop.
        gateway = setup.build(call_log=CallLog(store.log_tool_calls), token_rules=settings.token_rules)
        shown = f"http://{f'[{settings.host}]' if ':' in settings.host else settings.host}:{settings.port}"
        stderr.print(
            f"toolbridge gateway serving MCP on {shown}/mcp (older SSE clients: {shown}/sse, "
            f"database {store.safe_url})" + ("; token required" if settings.tokens else ""),
            markup=False,
        )
        run_server(http_app(gateway, settings), sock, token=token)
