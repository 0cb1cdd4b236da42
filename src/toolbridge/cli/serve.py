"""`toolbridge serve`: the OpenAI-compatible endpoint, the web page and its API, on 127.0.0.1:8765."""

from __future__ import annotations

import logging
import logging.config
from contextlib import ExitStack
from typing import Annotated

import typer

from toolbridge.cli._common import (
    ConfigOption,
    VerboseOption,
    fail,
    load,
    need_extra,
    setup_logging,
    start_tracing,
    stderr,
)
from toolbridge.cli._store import DbOption, open_store
from toolbridge.cli.app import app
from toolbridge.errors import ToolbridgeError
from toolbridge.telemetry import logging_config

HostOption = Annotated[
    str | None,
    typer.Option(
        "--host", help="Address to listen on. Default: 127.0.0.1 (this machine only).", show_default=False
    ),
]
PortOption = Annotated[
    int | None,
    typer.Option(
        "--port",
        "-p",
        help="Port. Default: 8765; 0 picks a free one, named in the startup line.",
        show_default=False,
    ),
]
TokenOption = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Require 'Authorization: Bearer TOKEN' on every request (required off 127.0.0.1, and "
        "there at least 16 characters). "
        "Default: $TOOLBRIDGE_TOKEN.",
        show_default=False,
    ),
]
LogFormatOption = Annotated[
    str | None,
    typer.Option(
        "--log-format",
        help="'text' or 'json' (one JSON object per log line, with run and chat ids). Default: text.",
        show_default=False,
    ),
]
NoActivityOption = Annotated[
    bool,
    typer.Option("--no-tool-activity", help="Don't show tool calls as reasoning on /v1/chat/completions."),
]


@app.command()
def serve(
    host: HostOption = None,
    port: PortOption = None,
    token: TokenOption = None,
    db: DbOption = None,
    no_tool_activity: NoActivityOption = False,
    log_format: LogFormatOption = None,
    config: ConfigOption = None,
    verbose: VerboseOption = False,
) -> None:
    """Serve agents over HTTP: POST /v1/chat/completions for any OpenAI client, and a web chat page at /."""
    need_extra("serve", "toolbridge serve")
    from toolbridge.server import create_app, listen, run_server, settings_from_config
    from toolbridge.store.serving import serving_lock

    log_level = "debug" if verbose else "warning"
    if log_format not in (None, "text", "json"):
        fail(f"--log-format must be 'text' or 'json', not {log_format!r}")
    setup_logging(verbose)
    loaded = load(config)
    try:
        settings = settings_from_config(
            loaded,
            host=host,
            port=port,
            token=token,
            tool_activity=False if no_tool_activity else None,
            log_format=log_format,
        )
        if settings.log_format == "json":
            logging.config.dictConfig(logging_config("json", log_level))
        start_tracing(loaded, command="toolbridge serve")
    except ToolbridgeError as exc:
        fail(str(exc))
    with open_store(db, config) as store, ExitStack() as held:
        try:
            held.enter_context(serving_lock(store.url))  # a second server on one SQLite file is refused
            has_users = store.users.any()
            settings.check_bind(has_users=has_users)
            sock = listen(settings.host, settings.port)
            if settings.port == 0:  # a free port the system picked: the Host check and the banner name it
                settings = settings.model_copy(update={"port": sock.getsockname()[1]})
        except ToolbridgeError as exc:
            fail(str(exc))
        server_app = create_app(loaded, store=store, settings=settings)
        shown_host = f"[{settings.host}]" if ":" in settings.host else settings.host
        banner = (
            f"toolbridge serving on http://{shown_host}:{settings.port}/ "
            f"(OpenAI base_url http://{shown_host}:{settings.port}/v1, database {store.safe_url})"
            + ("; token required" if settings.token else "")
            + ("; users' keys required" if has_users else "")
        )
        if settings.log_format == "json":
            logging.getLogger("toolbridge.server").info(banner)
        else:
            stderr.print(banner, markup=False)
        with sock:
            run_server(
                server_app,
                sock,
                log_level=log_level,
                token=settings.token,
                shutdown_grace=settings.shutdown_grace,
                log_format=settings.log_format,
            )
