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
from toolbridge.types import NATIVE_SOURCE, ToolSpec

if TYPE_CHECKING:
    from pathlib import Path

    from toolbridge.config import Config
    from toolbridge.gateway import ApprovalGate
    from toolbridge.gateway._tools import ToolOffer

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
    from toolbridge.agent.definition import load_agent_definition
    from toolbridge.gateway import ApprovalGate, ClientCalls, Gateway, gateway_features
    from toolbridge.store import CallLog
    from toolbridge.telemetry.metrics import install_metrics
    from toolbridge.tools import Toolbox

    setup_logging(verbose)  # on stderr: stdout carries the protocol
    if not http and (host is not None or port is not None or token is not None):
        fail("--host, --port and --token are for --http; add --http to serve over HTTP")
    loaded = load(config)
    try:
        # Without --agent, the default agent's tool rules and approval policy, as on every surface.
        definition = load_agent_definition(loaded, agent)
        # The gateway's calls are traced and counted like an agent's.
        start_tracing(loaded, command="toolbridge gateway")
        install_metrics()
    except ToolbridgeError as exc:
        fail(str(exc))

    def offers(tool: ToolSpec) -> bool:
        if no_native and tool.source == NATIVE_SOURCE:
            return False
        return definition.offers(tool)

    timeout = definition.call_timeout
    if definition.servers is not None:
        # Only the agent's servers: the others would be started (once per client, if unshared) for
        # tools no client may see.
        kept = {name: server for name, server in loaded.servers.items() if name in definition.servers}
        loaded = loaded.model_copy(update={"servers": kept})
    approval = ApprovalGate(definition.approval, loaded.gateway.approval)
    left_out = definition.left_out_reason
    if http:
        _serve_http(
            loaded,
            offers,
            left_out,
            definition.servers,
            approval=approval,
            timeout=timeout,
            native=not no_native,
            host=host,
            port=port,
            token=token,
            db=db,
            config=config,
        )
        return
    with open_store(db, config) as store:

        async def main() -> None:
            calls = ClientCalls()  # the servers' requests and logs go to the client whose call caused them
            async with Toolbox(loaded, native=not no_native, features=gateway_features(calls)) as toolbox:
                servers = definition.servers
                gateway = Gateway(
                    toolbox,
                    offers=offers,
                    left_out=left_out,
                    servers=servers,
                    call_log=CallLog(store.log_tool_calls),
                    timeout=timeout,
                    approval=approval,
                    calls=calls,
                )
                await gateway.serve_stdio()

        run(main, fast_loop=True)


def _serve_http(
    loaded: Config,
    offers: ToolOffer,
    left_out: str,
    servers: list[str] | None,
    *,
    approval: ApprovalGate,
    timeout: float | None,
    native: bool,
    host: str | None,
    port: int | None,
    token: str | None,
    db: str | None,
    config: Path | None,
) -> None:
    from toolbridge.gateway import ClientCalls, Gateway, gateway_features
    from toolbridge.gateway.http import HttpSettings, http_app
    from toolbridge.server import listen, run_server
    from toolbridge.store import CallLog
    from toolbridge.tools import Toolbox

    try:
        settings = HttpSettings.from_config(loaded, host=host, port=port, token=token)
        settings.check_bind()
        sock = listen(settings.host, settings.port, command="toolbridge gateway --http")
    except ToolbridgeError as exc:
        fail(str(exc))
    with sock, open_store(db, config) as store:
        calls = ClientCalls()
        gateway = Gateway(
            # opened by the app's lifespan, on uvicorn's event loop
            Toolbox(loaded, native=native, features=gateway_features(calls)),
            offers=offers,
            left_out=left_out,
            servers=servers,
            call_log=CallLog(store.log_tool_calls),
            timeout=timeout,
            token_rules=settings.token_rules,
            approval=approval,
            calls=calls,
        )
        shown = f"http://{f'[{settings.host}]' if ':' in settings.host else settings.host}:{settings.port}"
        stderr.print(
            f"toolbridge gateway serving MCP on {shown}/mcp (older SSE clients: {shown}/sse, "
            f"database {store.safe_url})" + ("; token required" if settings.tokens else ""),
            markup=False,
        )
        run_server(http_app(gateway, settings), sock, token=token)
