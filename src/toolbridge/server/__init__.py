"""The HTTP server: an OpenAI-compatible endpoint with MCP tools, and the web page with its JSON API.

    app = create_app(load_config(), store=Store(resolve_database_url()), settings=ServerSettings())
    uvicorn.run(app, host="127.0.0.1", port=8765)

`toolbridge serve` does this; docs/http-api.md describes every endpoint.
"""

from toolbridge.server._settings import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    TOKEN_ENV_VAR,
    ServerSettings,
    settings_from_config,
)
from toolbridge.server._uvicorn import listen, run_server
from toolbridge.server.app import STATIC_DIR, create_app

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "STATIC_DIR",
    "TOKEN_ENV_VAR",
    "ServerSettings",
    "create_app",
    "listen",
    "run_server",
    "settings_from_config",
]
