"""Running the app with uvicorn, stopping promptly even while web pages hold event streams open."""

from __future__ import annotations

import socket

import uvicorn
from fastapi import FastAPI

__all__ = ["run_server"]

GRACEFUL_SHUTDOWN_SECONDS = 5


class _StreamClosingServer(uvicorn.Server):
    """uvicorn that ends the page's event streams as it starts to stop: an open page would otherwise
    keep Ctrl-C waiting for the whole graceful-shutdown timeout, then be cut off with a traceback."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self._app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        state = getattr(self._app.state, "toolbridge", None)
        if state is not None:
            state.chats.close_streams()
        await super().shutdown(sockets=sockets)


def run_server(app: FastAPI, *, host: str, port: int, log_level: str = "warning") -> None:
    """Serve `app` until interrupted (Ctrl-C or SIGTERM)."""
    config = uvicorn.Config(
        app, host=host, port=port, log_level=log_level, timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS
    )
    _StreamClosingServer(config, app).run()
